import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DockerEngineClient, PING_TIMEOUT_MS } from "../../src/runtime/docker-client";
import { DockerRuntime } from "../../src/runtime/docker";
import { RuntimeUnavailableError } from "../../src/runtime/types";

/**
 * The Docker engine client's time limits: an ordinary engine call gets 60 s unless it has its own
 * (`timeoutMs`) or is `untimed`, so an engine that takes the connection and never answers makes
 * the call fail, saying so, instead of hanging.
 *
 * The engine is a stand-in at its HTTP boundary: the ping goes to the fake engine (so the client
 * learns its API version), every other call to the silent engine (vitest.config.ts), which takes
 * the connection and never answers.
 *
 * How time is controlled: workerd's AbortSignal.timeout runs on the runtime's own timers, which
 * vitest's fake timers do not reach (a fake advance of minutes leaves it unaborted), and waiting
 * 60 real seconds is out of the question. So AbortSignal.timeout is wrapped: every limit the client
 * asks for is recorded, and the 60 s default alone is served by a real 300 ms timeout. The test
 * thus sees both that the default is asked for and what happens when it runs out, through the
 * client's own signal and error handling.
 */

const REQUEST_TIMEOUT_MS = 60_000;
/** What the 60 s default is shortened to in these tests. */
const SHORT_MS = 300;

/** Wraps AbortSignal.timeout: returns the limits asked for, in order. */
function recordLimits(): number[] {
  const real = AbortSignal.timeout.bind(AbortSignal);
  const asked: number[] = [];
  vi.spyOn(AbortSignal, "timeout").mockImplementation((ms: number) => {
    asked.push(ms);
    return real(ms === REQUEST_TIMEOUT_MS ? SHORT_MS : ms);
  });
  return asked;
}

/** The engine as the client sees it: answers `/_ping`, never answers anything else. */
const hangingEngine: typeof fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.pathname === "/_ping") return fetch(`${env.RUNTIME_URL}/_ping`, init);
  return fetch(input, init);
};

const settle = <T>(promise: Promise<T>) => promise.then(() => null, (error: unknown) => error);
const realSleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(() => void vi.restoreAllMocks());

describe("the Docker engine client's time limits, on an engine that never answers", { timeout: 10_000 }, () => {
  it("ends an ordinary call (inspecting a container) at the default limit, saying the engine did not answer in time", async () => {
    const asked = recordLimits();
    const runtime = new DockerRuntime({ url: env.SILENT_ENGINE_URL, fetch: hangingEngine });
    const started = Date.now();
    const error = await settle(runtime.inspect("some-container"));
    const elapsed = Date.now() - started;

    // The ping had its own limit; the inspect had the default.
    expect(asked).toEqual([PING_TIMEOUT_MS, REQUEST_TIMEOUT_MS]);
    expect(error).toBeInstanceOf(RuntimeUnavailableError);
    expect((error as Error).message).toMatch(/^The container engine did not answer in time \(GET \/v[\d.]+\/containers\/some-container\/json\)\.$/);
    // It ended when the limit ran out, not earlier and not much later.
    expect(elapsed).toBeGreaterThanOrEqual(SHORT_MS - 5);
    expect(elapsed).toBeLessThan(SHORT_MS + 3_000);
  });

  it("gives a call with its own limit that limit instead", async () => {
    const asked = recordLimits();
    const client = new DockerEngineClient(env.SILENT_ENGINE_URL, hangingEngine);
    await client.ping();
    const started = Date.now();
    const error = await settle(client.request("POST", "/containers/some-container/stop", { timeoutMs: 150 }));
    const elapsed = Date.now() - started;

    expect(asked).toEqual([PING_TIMEOUT_MS, 150]);
    expect(error).toBeInstanceOf(RuntimeUnavailableError);
    expect((error as Error).message).toMatch(/^The container engine did not answer in time \(POST \/v[\d.]+\/containers\/some-container\/stop\)\.$/);
    expect(elapsed).toBeGreaterThanOrEqual(145);
    expect(elapsed).toBeLessThan(3_000);
  });

  it("does not cut an untimed call: it outlives the default limit and ends only by its caller's signal", async () => {
    const asked = recordLimits();
    const client = new DockerEngineClient(env.SILENT_ENGINE_URL, hangingEngine);
    await client.ping();
    asked.length = 0;

    const caller = new AbortController();
    let settled = false;
    const untimed = settle(client.request("GET", "/containers/some-container/logs", { query: { follow: "1" }, untimed: true, signal: caller.signal })).finally(() => {
      settled = true;
    });
    // An ordinary call sent at the same moment to the same engine runs out of time...
    const timed = await settle(client.request("GET", "/containers/some-container/json"));
    expect((timed as Error).message).toMatch(/did not answer in time/);
    // ...and, well past that, the untimed call still waits for the engine.
    await realSleep(3 * SHORT_MS);
    expect(settled).toBe(false);
    // Only the ordinary call asked for a time limit.
    expect(asked).toEqual([REQUEST_TIMEOUT_MS]);

    caller.abort();
    const error = await untimed;
    expect(error).toBeInstanceOf(RuntimeUnavailableError);
    expect((error as Error).message).toMatch(/^The container engine call was cancelled by its caller \(GET \/v[\d.]+\/containers\/some-container\/logs\)\.$/);
  });
});
