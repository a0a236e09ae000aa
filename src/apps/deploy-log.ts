/**
 * A deploy's log in R2 (`apps/<app id>/deploys/<deploy id>.log`): the source fetch, the build
 * output, the run and probe, and the instance's first output. The log is the record; the red
 * panel is an interpretation of it. R2 objects cannot be appended to, so the log is kept in
 * memory and written whole, at most every FLUSH_INTERVAL_MS while a deploy runs and at its end.
 */

/** A build can print a lot; past this the middle is dropped, keeping the start and the end. */
export const MAX_LOG_BYTES = 1024 * 1024;
const HEAD_BYTES = 256 * 1024;
const FLUSH_INTERVAL_MS = 1500;

export function deployLogKey(appId: string, deployId: string): string {
  return `apps/${appId}/deploys/${deployId}.log`;
}

export function appLogsPrefix(appId: string): string {
  return `apps/${appId}/`;
}

export class DeployLog {
  #head = "";
  #tail = "";
  #dropped = 0;
  #lastFlush = 0;
  #pending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly bucket: R2Bucket,
    private readonly key: string,
    private readonly now: () => number,
  ) {}

  /** Adds text; a line per call gets a newline. Writes to R2 now and then. */
  append(text: string): Promise<void> {
    const line = text.endsWith("\n") ? text : `${text}\n`;
    if (this.#head.length < HEAD_BYTES) this.#head += line;
    else this.#tail += line;
    if (this.#tail.length > MAX_LOG_BYTES - HEAD_BYTES) {
      const cut = this.#tail.length - (MAX_LOG_BYTES - HEAD_BYTES);
      this.#tail = this.#tail.slice(cut);
      this.#dropped += cut;
    }
    if (this.now() - this.#lastFlush >= FLUSH_INTERVAL_MS) return this.flush();
    return Promise.resolve();
  }

  /** A step line, as the console shows it: `==> Building image`. */
  step(text: string): Promise<void> {
    return this.append(`==> ${text}`);
  }

  text(): string {
    const gap = this.#dropped > 0 ? `\n[... ${this.#dropped} characters of output left out ...]\n` : "";
    return this.#head + gap + this.#tail;
  }

  /** Writes the whole log now; writes are chained so an older one never lands last. */
  flush(): Promise<void> {
    this.#lastFlush = this.now();
    const body = this.text();
    const write = this.#pending.then(() =>
      this.bucket.put(this.key, body, { httpMetadata: { contentType: "text/plain; charset=utf-8" } }),
    );
    this.#pending = write.catch(() => undefined);
    return write.then(() => undefined);
  }
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
