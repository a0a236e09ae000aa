/**
 * The benchmark's data: a deterministic recipe of SQL statements that fills a database with
 * realistic mixed-type rows. The same statements run in a managed database (through the
 * console's SQL route) and in a native `sqlite3` file, so both sides of a comparison hold the
 * very same rows without shipping them over HTTP: SQLite generates them itself with recursive
 * CTEs, a batch of a few MB per statement group.
 *
 * Pseudo-randomness comes from a Lehmer generator carried along the recursive CTE (one state per
 * row) and multiplied by fixed constants for further values, so no `random()` is involved and
 * integers never overflow 63 bits.
 */

/** The Lehmer modulus (2^31 - 1) and multiplier (MINSTD). */
export const P = 2147483647;
export const MINSTD = 48271;

/** Rows of each table per batch; one batch is about BATCH_RAW_BYTES of raw data. */
const BATCH_ROWS = { accounts: 250, events: 2500, documents: 1200 } as const;

/**
 * Raw bytes one batch adds (sum of value sizes: text and blob lengths, 8 per number), measured
 * from the recipe; used only to choose how many batches a target size needs. The bench reports
 * the size it actually measured.
 */
export const BATCH_RAW_BYTES = 2_450_000;

/** The schema: three tables covering INTEGER, REAL, short and long TEXT, BLOB and NULL, and an index. */
export const SCHEMA_SQL = `CREATE TABLE accounts (
  id INTEGER PRIMARY KEY, email TEXT NOT NULL, display_name TEXT, balance REAL NOT NULL,
  created_at INTEGER NOT NULL, plan TEXT NOT NULL, referrer_id INTEGER, avatar BLOB
);
CREATE TABLE events (
  id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL, kind TEXT NOT NULL,
  occurred_at INTEGER NOT NULL, amount REAL, payload TEXT NOT NULL
);
CREATE INDEX events_by_account ON events (account_id, occurred_at);
CREATE TABLE documents (
  id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL,
  attachment BLOB, checksum BLOB NOT NULL, score REAL
);`;

/** Table name -> column names, for measuring the raw size. */
export const TABLE_COLUMNS: Record<string, string[]> = {
  accounts: ["id", "email", "display_name", "balance", "created_at", "plan", "referrer_id", "avatar"],
  events: ["id", "account_id", "kind", "occurred_at", "amount", "payload"],
  documents: ["id", "account_id", "title", "body", "attachment", "checksum", "score"],
};

/**
 * 256 pronounceable words from 16 x 16 syllables, each in a 6-character slot of a BLOB: a BLOB
 * `substr` indexes bytes directly where a TEXT one walks the characters before the offset.
 */
const HEADS = ["ka", "lo", "mi", "su", "te", "ra", "no", "vi", "be", "do", "fa", "gu", "he", "ji", "pe", "zo"];
const TAILS = ["n", "ra", "lis", "to", "mar", "vel", "dun", "ce", "ph", "rix", "lo", "sa", "nt", "gor", "ep", "il"];
export const VOCAB = HEADS.flatMap((h) => TAILS.map((t) => (h + t).padEnd(6))).join("");

/** A fresh pseudo-random 31-bit value of the row: its state times the n-th constant. */
export function draw(n: number): string {
  // Odd constants far apart; n-th value of a row = x * (MINSTD^2 + 7919 n) mod P.
  return `(x*${(MINSTD * MINSTD + 7919 * n) % P}%${P})`;
}

/** The k-th pseudo-random byte (0..255) from draw `first` on: three bytes per 31-bit draw. */
export const byte = (first: number, k: number) => `((${draw(first + Math.floor(k / 3))}>>${(k % 3) * 8})&255)`;

/**
 * `a || b || ...` as a balanced tree: Cloudflare's SQLite allows an expression depth of 100, which
 * a left-leaning chain of a few hundred `||` would exceed.
 */
export function concat(parts: string[]): string {
  if (parts.length === 1) return parts[0]!;
  const half = Math.ceil(parts.length / 2);
  return `(${concat(parts.slice(0, half))}||${concat(parts.slice(half))})`;
}

/** `count` words separated by spaces, starting at draw `first` (three words per draw). */
export function words(first: number, count: number, separator = " "): string {
  const picks = Array.from({ length: count }, (_, k) => `rtrim(cast(substr(v,${byte(first, k)}*6+1,6) AS text))`);
  return concat(picks.flatMap((pick, k) => (k === 0 ? [pick] : [`'${separator}'`, pick])));
}

/** TEXT of `count` pseudo-random code points 1..256 (1 or 2 bytes each in UTF-8), from draw `first`. */
export function codePoints(first: number, count: number): string {
  const points = Array.from({ length: count }, (_, k) => `${byte(first, k)}+1`);
  // SQLite's default build takes at most 127 arguments per function call.
  const calls = [];
  for (let k = 0; k < points.length; k += 120) calls.push(`char(${points.slice(k, k + 120).join(",")})`);
  return concat(calls);
}

/** A BLOB of `count` pseudo-random code points 1..256 (1 or 2 bytes each), from draw `first`. */
function blob(first: number, count: number): string {
  return `cast(${codePoints(first, count)} AS blob)`;
}

/** A REAL in [0, scale) at full double precision. */
export const real = (n: number, scale: number) => `(${draw(n)}*${scale}.0/${P})`;

/** Every `outOf` rows, `nulls` of them are NULL (chosen by draw n). */
const nullable = (n: number, nulls: number, outOf: number, value: string) => `CASE WHEN ${draw(n)}%${outOf}<${nulls} THEN NULL ELSE ${value} END`;

/** The first row's generator state of batch `batch` of `table` (never 0). */
export function seedOf(table: string, batch: number): number {
  const salt = [...table].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % P, 7);
  return Number((BigInt(batch + 1) * 2654435761n + BigInt(salt)) % BigInt(P - 1)) + 1;
}

function insert(table: keyof typeof BATCH_ROWS, batch: number, select: string): string {
  const first = batch * BATCH_ROWS[table] + 1;
  const last = first + BATCH_ROWS[table] - 1;
  return `WITH RECURSIVE seq(i, x) AS (SELECT ${first}, ${seedOf(table, batch)} UNION ALL SELECT i+1, x*${MINSTD}%${P} FROM seq WHERE i<${last}),
vocab(v) AS (SELECT cast('${VOCAB}' AS blob))
INSERT INTO ${table} (${TABLE_COLUMNS[table]!.join(", ")}) SELECT ${select} FROM seq, vocab;`;
}

/** The SQL of batch `batch`: one INSERT per table; run it as one transaction. */
export function batchSql(batch: number): string {
  const accountsSoFar = (batch + 1) * BATCH_ROWS.accounts;
  const accounts = insert("accounts", batch, [
    "i",
    `${words(1, 1)}||'.'||${words(2, 1)}||(${draw(3)}%1000)||'@'||${words(4, 1)}||'.example'`,
    nullable(5, 1, 10, `${words(6, 2)}`),
    `(${draw(7)}%100000000)/100.0`,
    `1500000000+${draw(8)}%300000000`,
    `CASE ${draw(9)}%4 WHEN 0 THEN 'lite' WHEN 1 THEN 'starter' WHEN 2 THEN 'pro' ELSE 'enterprise' END`,
    nullable(10, 7, 10, `1+${draw(11)}%i`),
    nullable(12, 1, 2, blob(13, 48)),
  ].join(",\n  "));
  const events = insert("events", batch, [
    "i",
    `1+${draw(1)}%${accountsSoFar}`,
    `CASE ${draw(2)}%5 WHEN 0 THEN 'login' WHEN 1 THEN 'export.started' WHEN 2 THEN 'deploy' WHEN 3 THEN 'payment' ELSE 'api.call' END`,
    `1600000000000+${draw(3)}%200000000000`,
    nullable(4, 2, 10, real(5, 10000)),
    `'{"ip":"10.'||(${draw(6)}%256)||'.'||(${draw(7)}%256)||'.'||(${draw(8)}%256)||'","path":"/'||${words(9, 3, "/")}||'","status":'||(200+${draw(12)}%4*100)||',"ms":'||printf('%.3f',${real(13, 900)})||',"note":"'||${words(14, 24)}||'"}'`,
  ].join(",\n  "));
  const documents = insert("documents", batch, [
    "i",
    `1+${draw(1)}%${accountsSoFar}`,
    `upper(substr(${words(2, 1)},1,1))||${words(3, 6)}`,
    `${words(10, 230)}`,
    nullable(100, 7, 10, blob(101, 400)),
    blob(400, 32),
    nullable(420, 1, 4, real(421, 5)),
  ].join(",\n  "));
  return `${accounts}\n${events}\n${documents}`;
}

/** How many batches reach at least `rawBytes` of raw data. */
export function batchesFor(rawBytes: number): number {
  return Math.max(1, Math.ceil(rawBytes / BATCH_RAW_BYTES));
}

/** A query giving the raw size of the data: text and blob bytes, 8 per number, 0 per NULL. */
export function rawSizeSql(): string {
  const perTable = Object.entries(TABLE_COLUMNS).map(([table, columns]) => {
    const cells = columns.map((c) => `(CASE typeof(${c}) WHEN 'null' THEN 0 WHEN 'integer' THEN 8 WHEN 'real' THEN 8 ELSE length(cast(${c} AS blob)) END)`);
    return `SELECT sum(${cells.join("+")}) AS n FROM ${table}`;
  });
  return `SELECT sum(n) FROM (${perTable.join(" UNION ALL ")});`;
}

/**
 * A dataset shape: its schema, the SQL of each batch (one transaction each) and the query that
 * measures its raw size. The same recipe fills the managed database and the native file.
 */
export interface Recipe {
  /** e.g. `50 MB` or `narrow rows, 2,000,000`. */
  label: string;
  schema: string;
  batches: number;
  batchSql: (batch: number) => string;
  rawSizeSql: string;
}

/** The raw-size query of any tables: text and blob bytes, 8 per number, 0 per NULL. */
export function rawSizeSqlOf(tables: Record<string, string[]>): string {
  const perTable = Object.entries(tables).map(([table, columns]) => {
    const cells = columns.map((c) => `(CASE typeof(${c}) WHEN 'null' THEN 0 WHEN 'integer' THEN 8 WHEN 'real' THEN 8 ELSE length(cast(${c} AS blob)) END)`);
    return `SELECT sum(${cells.join("+")}) AS n FROM ${table}`;
  });
  return `SELECT sum(n) FROM (${perTable.join(" UNION ALL ")});`;
}

/** Today's mixed rows (accounts, events, documents) up to about `rawBytes`. */
export function mixedRecipe(rawBytes: number, label: string): Recipe {
  return { label, schema: SCHEMA_SQL, batches: batchesFor(rawBytes), batchSql, rawSizeSql: rawSizeSql() };
}
