import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { NO_ENGINE } from "../../src/admin/runtime-report";
import { EGRESS_UNCHECKED } from "../../src/runtime/egress-probe";
import { createApp } from "../../src/app";
import { defaultDeps } from "../../src/http/context";
import { ORIGIN } from "./helpers";

// Issue 24, "check it in the adapter's start-up report": GET /admin/api/runtime (operator token)
// names the engine and lists what the operator should fix there. The swarm's own checks, the
// no-new-privileges probe among them, run against real swarms in test/swarm/.

async function report(vars: Record<string, string> = {}, token: string | null = env.OPERATOR_TOKEN!): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(`${ORIGIN}/admin/api/runtime`, {
    headers: { "CF-Connecting-IP": "198.51.100.21", ...(token === null ? {} : { Authorization: `Bearer ${token}` }) },
  });
  const res = await createApp(defaultDeps).fetch(request, { ...env, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("GET /admin/api/runtime", () => {
  it("refuses a caller without the operator token", async () => {
    const res = await report({}, null);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ success: false, code: "UNAUTHORIZED" });
  });

  it("names the engine and its API version; one Docker engine reports only that its egress was not checked", async () => {
    const res = await report();
    expect(res.status).toBe(200);
    const body = (await res.json()) as { kind: string; api_version: string; problems: string[] };
    expect(body.kind).toBe("docker");
    expect(body.api_version).toMatch(/^\d+\.\d+$/);
    // The fake engine holds no egress probe image; the probe's verdict by effect is asked of the
    // real dockerd in test/e2e/apps-egress.test.ts.
    expect(body.problems).toEqual([EGRESS_UNCHECKED]);
  });

  it("says apps cannot be deployed when no engine is set", async () => {
    const res = await report({ RUNTIME_URL: "" });
    expect(res.status).toBe(200);
    // With what survives a crash (README, Operations): the retire ledger and the reconciler's last runs.
    expect(await res.json()).toEqual({ kind: null, api_version: null, problems: [NO_ENGINE], retire_ledger: { length: 0 }, reconciler: { last_run: null, last_engine_run: null } });
  });

  it("answers 503 ENGINE_UNAVAILABLE with the reason when the engine does not answer", async () => {
    const res = await report({ RUNTIME_URL: "http://127.0.0.1:9" });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { success: boolean; code: string; error: string };
    expect(body.code).toBe("ENGINE_UNAVAILABLE");
    expect(body.error).toMatch(/^The container engine .*\(GET \/_ping\)\.$/);
  });

  it("answers 503 within the ping's time limit when the engine takes the connection but never answers", async () => {
    // The test's own limit (40 s) is below an ordinary engine call's 60 s: the ping's limit answers first.
    const res = await report({ RUNTIME_URL: env.SILENT_ENGINE_URL });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { code: string; error: string };
    expect(body).toMatchObject({ code: "ENGINE_UNAVAILABLE", error: "The container engine did not answer in time (GET /_ping)." });
  }, 40_000);

  it("answers 503 naming what the engine refused when it is not the kind RUNTIME_KIND says, with no secret in it", async () => {
    // The fake engine is one plain engine with no swarm endpoints: it refuses the swarm's `/info`.
    const res = await report({ RUNTIME_KIND: "swarm", REGISTRY: "registry.example:5000", REGISTRY_USERNAME: "robot", REGISTRY_PASSWORD: "registry-secret-value" });
    expect(res.status).toBe(503);
    const text = await res.text();
    const body = JSON.parse(text) as { code: string; error: string };
    expect(body.code).toBe("ENGINE_UNAVAILABLE");
    expect(body.error).toMatch(/^The container engine refused GET \/v[\d.]+\/info with 404: .* Is RUNTIME_KIND \(swarm\) right for this engine\?$/);
    expect(text).not.toContain("registry-secret-value");
    expect(text).not.toContain(env.OPERATOR_TOKEN!);
  });
});
