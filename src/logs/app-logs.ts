import { DurableObject } from "cloudflare:workers";
import { getApp } from "../apps/store";
import { launchEnv } from "../envvars/store";
import { describeError, log } from "../http/log";
import { runtimeFor } from "../runtime";
import type { LogLine } from "../runtime/types";
import { type ChunkRef, KEPT_LINES, chunkKey, chunksToDrop, chunksToRead, decodeLines, encodeLines, flushTarget, linesBytes, shouldFlush } from "./chunks";
import { LogIds } from "./cursor";
import { maskLine, secretsToMask } from "./mask";
import { type LogSearch, matchesSearch, pickLines } from "./query";

/** How often the output of a running app is collected, and of a stopped one (to notice a start). */
export const COLLECT_EVERY_MS = 5_000;
export const IDLE_CHECK_EVERY_MS = 60_000;
/** Lines read from the engine per collection at most. */
export const MAX_LINES_PER_COLLECT = 2 * KEPT_LINES;
/** Lines wait at most this long in the object before they are written to R2. */
export const FLUSH_AFTER_MS = 30_000;

interface Cursor {
  instanceId: string;
  at: number;
  n: number;
}

interface Pending {
  lines: LogLine[];
  since: number | null;
}

/**
 * One per app (named by the app id): keeps the app's runtime output while nobody watches. Its
 * alarm reads the instance's lines since the last one it kept (`logs?since=`, every
 * COLLECT_EVERY_MS while the app runs), masks the app's env values in them, and writes them to R2
 * in chunks (`chunks.ts`); the last KEPT_LINES lines are kept. Searches ask it, so they also see
 * the lines not yet written to R2. It stops when the app is deleted, removing what it wrote.
 */
export class AppLogs extends DurableObject<Env> {
  #collecting: Promise<void> = Promise.resolve();

  /** Starts collecting for the app (after a deploy, or when someone reads its logs). */
  async watch(appId: string): Promise<void> {
    this.ctx.storage.kv.put("app_id", appId);
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now());
  }

  /**
   * The kept lines that answer the search, oldest first. Collects first so they are current,
   * unless `collect` is false (the app page, whose script then follows the live stream).
   */
  async search(appId: string, search: LogSearch, options: { collect?: boolean } = {}): Promise<LogLine[]> {
    await this.watch(appId);
    if (options.collect !== false) await this.#collect(appId).catch((error: unknown) => log("warn", "log collection failed", { app_id: appId, ...describeError(error) }));
    const pending = this.#pending().lines.filter((l) => matchesSearch(l, search));
    const found: LogLine[][] = [pending];
    let count = pending.length;
    for (const chunk of chunksToRead(this.#chunks(), search.since, search.until)) {
      if (count >= search.limit) break;
      const lines = (await this.#readChunk(chunk)).filter((l) => matchesSearch(l, search));
      found.unshift(lines);
      count += lines.length;
    }
    return pickLines(found.flat(), search);
  }

  override async alarm(): Promise<void> {
    const appId = this.ctx.storage.kv.get<string>("app_id");
    if (!appId) return;
    const app = await getApp(this.env, appId);
    if (!app) return this.#forget();
    await this.#collect(appId).catch((error: unknown) => log("warn", "log collection failed", { app_id: appId, ...describeError(error) }));
    await this.ctx.storage.setAlarm(Date.now() + (app.instanceId ? COLLECT_EVERY_MS : IDLE_CHECK_EVERY_MS));
  }

  /**
   * One collection at a time, in order: a search arriving during the alarm's collection waits for
   * it and then collects again, so it sees every line printed before it was asked.
   */
  #collect(appId: string): Promise<void> {
    const next = this.#collecting.catch(() => undefined).then(() => this.#collectOnce(appId));
    this.#collecting = next;
    return next;
  }

  async #collectOnce(appId: string): Promise<void> {
    const app = await getApp(this.env, appId);
    const runtime = runtimeFor(this.env);
    if (app?.instanceId && runtime) {
      const cursor = this.ctx.storage.kv.get<Cursor>("cursor");
      const same = cursor?.instanceId === app.instanceId ? cursor : null;
      // Resuming reads every line since the last one kept (a `tail` would shift the numbering of
      // that millisecond's lines); a flood is read in bounded steps, the next collection goes on.
      const lines = await runtime.logLines(app.instanceId, same ? { since: same.at } : { tail: KEPT_LINES });
      if (lines) {
        const secrets = secretsToMask(Object.values((await launchEnv(this.env, appId)).env));
        const ids = new LogIds(same ? { at: same.at, n: same.n } : null);
        let batch: LogLine[] = [];
        let last: Cursor | null = null;
        let read = 0;
        for await (const line of lines) {
          if (++read > MAX_LINES_PER_COLLECT) break;
          if (ids.next(line) === null) continue;
          const state = ids.position();
          last = { instanceId: app.instanceId, at: state.at, n: state.n };
          batch.push({ at: line.at, stream: line.stream, text: maskLine(line.text, secrets) });
          if (batch.length >= 500) {
            await this.#add(appId, batch, last);
            batch = [];
          }
        }
        if (batch.length > 0 && last) await this.#add(appId, batch, last);
      }
    }
    const pending = this.#pending();
    if (shouldFlush({ count: pending.lines.length, bytes: linesBytes(pending.lines), since: pending.since }, Date.now(), FLUSH_AFTER_MS)) await this.#flush(appId);
  }

  /** Lines kept in the object until a flush; a full chunk's worth goes to R2 at once. */
  async #add(appId: string, lines: LogLine[], cursor: Cursor): Promise<void> {
    const pending = this.#pending();
    pending.lines.push(...lines);
    pending.since ??= Date.now();
    this.ctx.storage.kv.put("pending", pending);
    this.ctx.storage.kv.put<Cursor>("cursor", cursor);
    if (shouldFlush({ count: pending.lines.length, bytes: linesBytes(pending.lines), since: pending.since }, Date.now(), FLUSH_AFTER_MS)) await this.#flush(appId);
  }

  async #flush(appId: string): Promise<void> {
    const pending = this.#pending();
    if (pending.lines.length === 0) return;
    const chunks = this.#chunks();
    const bytes = linesBytes(pending.lines);
    let ref: ChunkRef;
    let body: LogLine[];
    if (flushTarget(chunks, pending.lines.length, bytes) === "merge") {
      const last = chunks.pop()!;
      body = [...(await this.#readChunk(last)), ...pending.lines];
      ref = { key: last.key, first: last.first, last: pending.lines.at(-1)!.at, count: body.length, bytes: last.bytes + bytes };
    } else {
      const seq = (this.ctx.storage.kv.get<number>("seq") ?? 0) + 1;
      this.ctx.storage.kv.put("seq", seq);
      body = pending.lines;
      ref = { key: chunkKey(appId, seq), first: pending.lines[0]!.at, last: pending.lines.at(-1)!.at, count: body.length, bytes };
    }
    await this.env.LOGS.put(ref.key, encodeLines(body), { httpMetadata: { contentType: "application/x-ndjson" } });
    chunks.push(ref);
    const drop = chunksToDrop(chunks, 0);
    const dropped = chunks.splice(0, drop);
    this.ctx.storage.kv.put("chunks", chunks);
    this.ctx.storage.kv.put<Pending>("pending", { lines: [], since: null });
    if (dropped.length > 0) await this.env.LOGS.delete(dropped.map((c) => c.key));
  }

  async #readChunk(chunk: ChunkRef): Promise<LogLine[]> {
    const object = await this.env.LOGS.get(chunk.key);
    return object ? decodeLines(await object.text()) : [];
  }

  /** The app is gone: its chunks and this object's storage go too. */
  async #forget(): Promise<void> {
    const keys = this.#chunks().map((c) => c.key);
    if (keys.length > 0) await this.env.LOGS.delete(keys);
    await this.ctx.storage.deleteAll();
  }

  #pending(): Pending {
    return this.ctx.storage.kv.get<Pending>("pending") ?? { lines: [], since: null };
  }

  #chunks(): ChunkRef[] {
    return this.ctx.storage.kv.get<ChunkRef[]>("chunks") ?? [];
  }
}

/** The app's log keeper (one Durable Object per app). */
export function appLogs(env: Env, appId: string): DurableObjectStub<AppLogs> {
  return env.APP_LOGS.get(env.APP_LOGS.idFromName(appId));
}
