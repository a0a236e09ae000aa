import { DurableObject } from "cloudflare:workers";
import { launchEnv } from "../envvars/store";
import { describeError, log } from "../http/log";
import { runtimeFor } from "../runtime";
import type { ContainerRuntime, LogLine } from "../runtime/types";
import { LogIds, instanceTag } from "./cursor";
import { LogFeed, RING_LINES, type Resume } from "./live-feed";
import { secretsToMask } from "./mask";

/**
 * One per serving instance (named by app id and instance id): ONE engine `logs?follow=1` shared by
 * every viewer of the instance, however many tabs are open. The first viewer opens it (the last
 * RING_LINES lines, then the follow from there); each line is masked and numbered once and fanned
 * out by a LogFeed (live-feed.ts). When the last viewer leaves, the engine call is aborted and the
 * object forgets the instance's lines; when the engine ends the follow (the instance stopped, was
 * replaced or removed), every viewer's stream ends after its last lines, and reconnecting viewers
 * follow whatever instance the app then serves, through that instance's object.
 */
export class LiveLogs extends DurableObject<Env> {
  #feed: Promise<LogFeed | null> | null = null;

  /**
   * Viewer `viewer`'s SSE body from `resume` on (see startPosition), or null when the engine has no
   * such instance. The viewer's request calls `leave` when its client goes away.
   */
  async stream(input: { appId: string; instanceId: string; viewer: string; resume: Resume | null }): Promise<ReadableStream<Uint8Array> | null> {
    const opening = (this.#feed ??= this.#open(input.appId, input.instanceId));
    const feed = await opening.catch((error: unknown) => {
      this.#forget(opening);
      throw error;
    });
    if (!feed) {
      this.#forget(opening);
      return null;
    }
    return feed.subscribe(input.viewer, input.resume);
  }

  /** The viewer's client went away (a cancelled stream reaches this object only when it next writes). */
  async leave(input: { viewer: string }): Promise<void> {
    (await this.#feed?.catch(() => null))?.leave(input.viewer);
  }

  #forget(opening: Promise<LogFeed | null>): void {
    if (this.#feed === opening) this.#feed = null;
  }

  /** Reads the instance's last lines, then follows it from the last of them. */
  async #open(appId: string, instanceId: string): Promise<LogFeed | null> {
    const runtime = runtimeFor(this.env);
    if (!runtime) return null;
    const engineCall = new AbortController();
    const recent = await runtime.logLines(instanceId, { tail: RING_LINES, signal: engineCall.signal });
    if (!recent) return null;
    const backlog: LogLine[] = [];
    for await (const line of recent) backlog.push(line);
    const secrets = secretsToMask(Object.values((await launchEnv(this.env, appId)).env));
    const opening = this.#feed;
    const feed = new LogFeed({
      tag: instanceTag(instanceId),
      secrets,
      catchUp: (since, signal) => runtime.logLines(instanceId, { since, signal }),
      onIdle: () => {
        engineCall.abort();
        if (opening) this.#forget(opening);
      },
    });
    feed.load(backlog, backlog.length < RING_LINES);
    // The follow starts at the last line read; the lines of that millisecond already read are skipped.
    const seen = new LogIds();
    for (const line of backlog) seen.next(line);
    const last = backlog.length > 0 ? seen.position() : null;
    const follow = await runtime.logLines(instanceId, { ...(last ? { since: last.at } : {}), follow: true, signal: engineCall.signal });
    void this.#pump(feed, follow, new LogIds(last), engineCall.signal).finally(() => {
      if (opening) this.#forget(opening);
    });
    return feed;
  }

  /** Hands the follow's new lines to the feed until the engine ends it (or the last viewer left). */
  async #pump(feed: LogFeed, follow: Awaited<ReturnType<ContainerRuntime["logLines"]>>, skip: LogIds, signal: AbortSignal): Promise<void> {
    try {
      if (follow) for await (const line of follow) if (skip.next(line) !== null) feed.append(line);
    } catch (error) {
      if (!signal.aborted) log("warn", "live log follow failed", describeError(error));
    } finally {
      feed.end();
    }
  }
}

/** The live log object of an app's instance. */
export function liveLogs(env: Env, appId: string, instanceId: string): DurableObjectStub<LiveLogs> {
  return env.LIVE_LOGS.get(env.LIVE_LOGS.idFromName(`${appId}:${instanceId}`));
}
