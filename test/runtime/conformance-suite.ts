/**
 * What the conformance suite's parts share (`conformance.ts` registers them): the adapter under
 * test, this run's names, and the helpers that build, start and wait.
 */
import { it } from "vitest";
import type { BuildOutcome, ContainerRuntime, Instance, InstanceSpec } from "../../src/runtime/types";
import type * as img from "./images";

export interface RuntimeUnderTest {
  runtime: ContainerRuntime;
  /**
   * The engine's Docker API base, to read back what the adapter sent (`docker inspect`). Given for
   * a one-engine adapter: its containers' isolation settings and networks are checked.
   */
  engineUrl?: string;
  /**
   * How often the adapter's engine restarts a process that exits non-zero before giving up, and how
   * long that takes at most (its restart delays included). Default: the Docker adapter's
   * MAX_RESTARTS, within 30 s.
   */
  restartPolicy?: { maxRestarts: number; giveUpMs: number };
  /** Whether `state` can tell the kernel's OOM kill of the instances this suite starts. */
  tellsOomKill?: boolean;
  /**
   * Whether `replace` switches generations in place (Swarm: the same id at a new address) rather
   * than starting a new instance beside the previous one (one engine).
   */
  switchesInPlace?: boolean;
  cleanup?: () => Promise<void>;
}

/** One registration of the suite: set up in its `beforeAll`, cleaned after each test and at the end. */
export interface Suite {
  /** This run's mark, in every name, tag and label the suite makes. */
  run: string;
  tag(role: string): string;
  runtime: ContainerRuntime;
  under: RuntimeUnderTest;
  busybox: Uint8Array;
  /** Removed after each test (ids or names). */
  instances: string[];
  /** Removed after the suite. */
  images: string[];
  /** Removed after each test. */
  networks: string[];
  /** Builds `role`'s Dockerfile from the shared context; the image is removed after the suite. */
  build(role: keyof typeof img.DOCKERFILES, output?: string[]): Promise<BuildOutcome>;
  spec(image: string, env?: Record<string, string>): InstanceSpec;
  /** Starts an instance that is removed after the test. */
  start(image: string, env?: Record<string, string>): Promise<Instance>;
  restartPolicy(): { maxRestarts: number; giveUpMs: number };
  /** `it` for tests of a one-engine adapter's container settings and networks (the swarm's are its services' specs). */
  engineIt: ReturnType<typeof it.skipIf>;
}

/** A versioned engine call, outside the adapter: what `docker inspect` shows. */
export async function engineJson<T>(base: string, path: string): Promise<T> {
  const version = (await fetch(`${base}/_ping`)).headers.get("Api-Version");
  return (await (await fetch(`${base}/v${version}${path}`)).json()) as T;
}

export async function engineStatus(base: string, path: string): Promise<number> {
  const version = (await fetch(`${base}/_ping`)).headers.get("Api-Version");
  const res = await fetch(`${base}/v${version}${path}`);
  await res.body?.cancel();
  return res.status;
}

/** A host port nothing listens on now (the system's pick, released at once). */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The body of a 200 reply, or null when nothing answers (connection refused or reset, or not 200). */
export async function fetchText(url: string): Promise<string | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    const text = await res.text();
    return res.status === 200 ? text : null;
  } catch {
    return null;
  }
}

/** Polls until the URL answers 200 (an instance takes a moment to listen). */
export async function waitForText(url: string): Promise<string> {
  let text: string | null = null;
  await waitFor(async () => (text = await fetchText(url)) !== null, `${url} to answer`);
  return text!;
}

export async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function collect<T>(lines: AsyncIterable<T> | null): Promise<T[]> {
  const out: T[] = [];
  if (lines) for await (const line of lines) out.push(line);
  return out;
}

/** Rejects when `work` has not settled within `ms`. */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not done within ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
