/**
 * Splits SQL text into statements the way `sqlite3_complete` reads it: a `;` ends a statement
 * unless it is inside a string, a quoted identifier or a comment, or inside the body of a
 * `CREATE TRIGGER`, which ends only at `END;`. Empty statements are dropped.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  /** Words of the current statement, upper-cased, to spot CREATE [TEMP] TRIGGER and END. */
  let words: string[] = [];
  let lastWord = "";
  const isTrigger = () => {
    const w = words[1] === "TEMP" || words[1] === "TEMPORARY" ? words.slice(0, 3) : words.slice(0, 2);
    return w[0] === "CREATE" && w[w.length - 1] === "TRIGGER";
  };
  const finish = (end: number) => {
    const text = sql.slice(start, end).trim();
    if (text.replace(/;$/, "").trim() !== "" && !isOnlyComments(text)) statements.push(text);
    start = end;
    words = [];
    lastWord = "";
  };
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"' || ch === "`") {
      const close = sql.indexOf(ch, i + 1);
      i = close === -1 ? sql.length : skipDoubled(sql, close, ch);
      lastWord = "";
    } else if (ch === "[") {
      const close = sql.indexOf("]", i + 1);
      i = close === -1 ? sql.length : close + 1;
      lastWord = "";
    } else if (ch === "-" && sql[i + 1] === "-") {
      const nl = sql.indexOf("\n", i);
      i = nl === -1 ? sql.length : nl + 1;
    } else if (ch === "/" && sql[i + 1] === "*") {
      const close = sql.indexOf("*/", i + 2);
      i = close === -1 ? sql.length : close + 2;
    } else if (ch === ";") {
      i++;
      if (!isTrigger() || lastWord === "END") finish(i);
      else lastWord = "";
    } else if (/[A-Za-z_]/.test(ch)) {
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_$]/.test(sql[j]!)) j++;
      lastWord = sql.slice(i, j).toUpperCase();
      if (words.length < 3) words.push(lastWord);
      i = j;
    } else {
      if (!/\s/.test(ch)) lastWord = "";
      i++;
    }
  }
  finish(sql.length);
  return statements;
}

/** Index just past a quoted run that ends at `close`, treating a doubled quote as an escape. */
function skipDoubled(sql: string, close: number, quote: string): number {
  let end = close;
  while (sql[end + 1] === quote) {
    const next = sql.indexOf(quote, end + 2);
    if (next === -1) return sql.length;
    end = next;
  }
  return end + 1;
}

function isOnlyComments(text: string): boolean {
  return text.replace(/--[^\n]*(\n|$)/g, "").replace(/\/\*[\s\S]*?(\*\/|$)/g, "").replace(/;/g, "").trim() === "";
}
