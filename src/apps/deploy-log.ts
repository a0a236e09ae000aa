/**
 * A deploy's log in R2: the source fetch, the build output, the run and probe, and the
 * instance's first output. The log is the record; the red panel is an interpretation of it.
 * R2 objects cannot be appended to, so the log is written as parts, each written once and never
 * rewritten: `apps/<app id>/deploys/<deploy id>/<started>-<n>.log`, a part at most every
 * FLUSH_INTERVAL_MS (or PART_BYTES) while a deploy runs, and the rest at its end. Reading the log
 * joins its parts in order. Every line has the app's env values masked (`src/logs/mask.ts`).
 */
import { maskText } from "../logs/mask";

/** A build can print a lot; past this the middle is dropped, keeping the start and the end. */
export const MAX_LOG_BYTES = 1024 * 1024;
const TAIL_BYTES = 256 * 1024;
const FLUSH_INTERVAL_MS = 1500;
const PART_BYTES = 64 * 1024;

/** Where a deploy log written whole by earlier versions lives (still read). */
export function deployLogKey(appId: string, deployId: string): string {
  return `apps/${appId}/deploys/${deployId}.log`;
}

/** The folder of a deploy log's parts. */
export function deployLogPrefix(appId: string, deployId: string): string {
  return `apps/${appId}/deploys/${deployId}/`;
}

export function appLogsPrefix(appId: string): string {
  return `apps/${appId}/`;
}

export class DeployLog {
  #buffer = "";
  #written = 0;
  #tail = "";
  #dropped = 0;
  /** The head is full: every later line goes to the tail, in order. */
  #full = false;
  #part = 0;
  #lastFlush = 0;
  #secrets: readonly string[] = [];
  #pending: Promise<unknown> = Promise.resolve();
  /** Parts of this writer sort after an earlier try's parts of the same deploy. */
  readonly #started: string;

  constructor(
    private readonly bucket: R2Bucket,
    private readonly prefix: string,
    private readonly now: () => number,
  ) {
    this.#started = String(now()).padStart(15, "0");
  }

  /** The app's env values (from `secretsToMask`): masked in every line from now on. */
  mask(secrets: readonly string[]): void {
    this.#secrets = secrets;
  }

  /** Adds text; a line per call gets a newline. Writes a part to R2 now and then. */
  append(text: string): Promise<void> {
    const line = maskText(text.endsWith("\n") ? text : `${text}\n`, this.#secrets);
    if (!this.#full && this.#written + this.#buffer.length + line.length <= MAX_LOG_BYTES - TAIL_BYTES) this.#buffer += line;
    else {
      this.#full = true;
      // Past the head: keep only the last TAIL_BYTES, written when the deploy ends.
      this.#tail += line;
      if (this.#tail.length > TAIL_BYTES) {
        const cut = this.#tail.length - TAIL_BYTES;
        this.#tail = this.#tail.slice(cut);
        this.#dropped += cut;
      }
    }
    if (this.#buffer.length >= PART_BYTES || this.now() - this.#lastFlush >= FLUSH_INTERVAL_MS) return this.#write(false);
    return Promise.resolve();
  }

  /** A step line, as the console shows it: `==> Building image`. */
  step(text: string): Promise<void> {
    return this.append(`==> ${text}`);
  }

  /** Writes everything not yet written (at the deploy's end, its failure, or before a retry). */
  flush(): Promise<void> {
    return this.#write(true);
  }

  /** Writes what came since the last part as a new part (the tail only when `all`); chained, in order. */
  #write(all: boolean): Promise<void> {
    this.#lastFlush = this.now();
    let body = this.#buffer;
    this.#buffer = "";
    if (all && this.#tail) {
      // Written at a flush after the head was full (the deploy's end): the gap, then the tail.
      body += `${this.#dropped > 0 ? `\n[... ${this.#dropped} characters of output left out ...]\n` : ""}${this.#tail}`;
      this.#tail = "";
      this.#dropped = 0;
    }
    if (!body) return this.#pending.then(() => undefined);
    this.#written += body.length;
    const key = `${this.prefix}${this.#started}-${String(++this.#part).padStart(6, "0")}.log`;
    const write = this.#pending.then(() => this.bucket.put(key, body, { httpMetadata: { contentType: "text/plain; charset=utf-8" } }));
    this.#pending = write.catch(() => undefined);
    return write.then(() => undefined);
  }
}

/** The parts of a deploy log in order, from `after` (a part's key) on. */
export async function deployLogParts(bucket: R2Bucket, appId: string, deployId: string, after?: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: deployLogPrefix(appId, deployId), cursor, ...(after ? { startAfter: after } : {}) });
    keys.push(...page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys.sort();
}

/** A deploy's whole log as text ("" before anything was written). */
export async function readDeployLog(bucket: R2Bucket, appId: string, deployId: string): Promise<string> {
  const keys = await deployLogParts(bucket, appId, deployId);
  if (keys.length === 0) return (await (await bucket.get(deployLogKey(appId, deployId)))?.text()) ?? "";
  const texts = await Promise.all(keys.map(async (key) => (await (await bucket.get(key))?.text()) ?? ""));
  return texts.join("");
}

/** Deletes every log of an app (Delete removes the logs with the app). */
export async function deleteAppLogs(bucket: R2Bucket, appId: string): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: appLogsPrefix(appId), cursor });
    if (page.objects.length > 0) await bucket.delete(page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}
