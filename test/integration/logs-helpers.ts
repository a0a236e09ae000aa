import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { database } from "../../src/db/client";
import { apps } from "../../src/db/schema";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import type { ConsoleClient } from "./helpers";

// Live log helpers for Worker tests. The engine is the fake Docker Engine (RUNTIME_URL): its
// test-only /fake routes make an instance print lines and count open follow calls.

const engine = (env as unknown as { RUNTIME_URL: string }).RUNTIME_URL;
export const SECRET = "s3cr3t-value-0042";
let n = 0;
export const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;

export interface Line {
  at: number;
  stream: "stdout" | "stderr";
  text: string;
}

export interface Event {
  id: string;
  data: Line;
}

/** A deployed app with env values (one worth masking) and its serving instance. */
export async function liveApp(): Promise<{ client: ConsoleClient; app: AppJson; instanceId: string }> {
  const client = await signedUpClient();
  const repository = await publishRepository(unique("logs"), httpdFiles("<p>logs</p>"));
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Logs", repository, subdomain: unique("logs") });
  await client.json("PUT", `/console/api/apps/${app.id}/env`, { version: 0, variables: [{ key: "API_TOKEN", value: SECRET }, { key: "SHORT", value: "ab" }] });
  await client.json("POST", `/console/api/apps/${app.id}/deploy`);
  expect((await waitForDeploy(client, app.id)).latest_deploy?.status).toBe("live");
  return { client, app, instanceId: await instanceOf(app.id) };
}

export async function instanceOf(appId: string): Promise<string> {
  return (await database(env).select().from(apps).where(eq(apps.id, appId)).get())!.instanceId!;
}

export async function print(instanceId: string, text: string, stream: 1 | 2 = 1): Promise<void> {
  const res = await fetch(`${engine}/fake/containers/${instanceId}/print`, { method: "POST", body: JSON.stringify({ text, stream }) });
  expect(res.status).toBe(204);
}

/** Open engine `logs?follow=1` calls for the instance. */
export async function followers(instanceId: string): Promise<number> {
  return ((await (await fetch(`${engine}/fake/containers/${instanceId}/followers`)).json()) as { count: number }).count;
}

/** Waits (up to 5 s) until the instance has `count` follow calls open, and returns how many it has. */
export async function followersSettle(instanceId: string, count: number): Promise<number> {
  const deadline = Date.now() + 5_000;
  while ((await followers(instanceId)) !== count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return followers(instanceId);
}

/** Reads SSE events off a body until `until` says enough or it ends (or the time runs out). */
export async function readEvents(from: ReadableStream<Uint8Array> | ReadableStreamDefaultReader<Uint8Array>, until: (events: Event[]) => boolean, timeoutMs = 10_000) {
  const reader = from instanceof ReadableStream ? from.getReader() : from;
  const decoder = new TextDecoder();
  const events: Event[] = [];
  let text = "";
  let done = false;
  const deadline = Date.now() + timeoutMs;
  while (!until(events)) {
    if (Date.now() > deadline) throw new Error(`only ${events.length} events: ${JSON.stringify(events.slice(-3))}`);
    const chunk = await reader.read();
    if (chunk.done) {
      done = true;
      break;
    }
    text += decoder.decode(chunk.value, { stream: true });
    let cut: number;
    while ((cut = text.indexOf("\n\n")) >= 0) {
      const block = text.slice(0, cut);
      text = text.slice(cut + 2);
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (id && data) events.push({ id, data: JSON.parse(data) as Line });
    }
  }
  return { events, reader, done };
}
