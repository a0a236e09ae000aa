import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { cloudflareProvider } from "../../src/domains/cloudflare";
import { FAKE_CLOUDFLARE_TOKEN, FAKE_CLOUDFLARE_ZONE } from "../fakes/fake-cloudflare";
import { uniqueHost } from "./domain-helpers";

// Issue 15, certificates: the `cloudflare` provider uses Cloudflare for SaaS custom hostnames
// (create with HTTP DCV, poll `status` and `ssl.status` until active, delete on removal), tested
// against a test double of the documented API at its HTTP boundary.

const provider = (token = FAKE_CLOUDFLARE_TOKEN) => cloudflareProvider({ apiUrl: env.CLOUDFLARE_FAKE_URL, zoneId: FAKE_CLOUDFLARE_ZONE, token });
const control = (path: string, body: unknown) => fetch(`${env.CLOUDFLARE_FAKE_URL}/__control/${path}`, { method: "PUT", body: JSON.stringify(body) });

describe("cloudflare hostname provider", () => {
  it("creates with HTTP validation, waits for the hostname, then for the certificate, and deletes", async () => {
    const cf = provider();
    const hostname = uniqueHost();
    const created = await cf.ensure(hostname, null);
    expect(created.ref).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.outcome).toEqual({ kind: "pending" });

    const got = await fetch(`${env.CLOUDFLARE_FAKE_URL}/zones/${FAKE_CLOUDFLARE_ZONE}/custom_hostnames/${created.ref}`, { headers: { Authorization: `Bearer ${FAKE_CLOUDFLARE_TOKEN}` } });
    expect(((await got.json()) as { result: { ssl: { method: string; type: string } } }).result.ssl).toMatchObject({ method: "http", type: "dv" });

    await control(hostname, { ssl: "pending_validation" });
    expect((await cf.ensure(hostname, created.ref)).outcome).toEqual({ kind: "pending" });
    await control(hostname, { status: "active" });
    expect(await cf.ensure(hostname, created.ref)).toEqual({ ref: created.ref, outcome: { kind: "active", https: false, waitingForCertificate: true } });
    await control(hostname, { ssl: "active" });
    expect((await cf.ensure(hostname, created.ref)).outcome).toEqual({ kind: "active", https: true, waitingForCertificate: false });

    await cf.remove(hostname, created.ref);
    expect((await control(hostname, {})).status).toBe(404);
    await expect(cf.remove(hostname, created.ref)).resolves.toBeUndefined();
  });

  it("creates the hostname again when it was deleted at Cloudflare meanwhile", async () => {
    const cf = provider();
    const hostname = uniqueHost();
    const first = await cf.ensure(hostname, null);
    await cf.remove(hostname, first.ref);
    const again = await cf.ensure(hostname, first.ref);
    expect(again.ref).not.toBe(first.ref);
    expect(again.outcome).toEqual({ kind: "pending" });
  });

  it("turns API errors into the reason an Error domain shows", async () => {
    const hostname = uniqueHost();
    await provider().ensure(hostname, null);
    expect(await provider().ensure(hostname, null)).toEqual({ ref: null, outcome: { kind: "failed", reason: "Cloudflare API error 1406: Duplicate custom hostname found." } });
    expect((await provider("wrong-token").ensure(uniqueHost(), null)).outcome).toEqual({ kind: "failed", reason: "Cloudflare API error 10000: Authentication error" });
    await control("fail-next", { status: 500, code: 1000, message: "Internal error" });
    expect((await provider().ensure(uniqueHost(), null)).outcome).toEqual({ kind: "failed", reason: "Cloudflare API error 1000: Internal error" });
    const unreachable = cloudflareProvider({ apiUrl: "http://127.0.0.1:9/client/v4", zoneId: FAKE_CLOUDFLARE_ZONE, token: "x" });
    expect((await unreachable.ensure(uniqueHost(), null)).outcome).toEqual({ kind: "failed", reason: "Cloudflare API could not be reached" });
  });

  it("reports a blocked hostname and a certificate that timed out as failures", async () => {
    const cf = provider();
    const blocked = uniqueHost();
    const a = await cf.ensure(blocked, null);
    await control(blocked, { status: "blocked" });
    expect((await cf.ensure(blocked, a.ref)).outcome).toEqual({ kind: "failed", reason: "Cloudflare reports the hostname as blocked." });
    const slow = uniqueHost();
    const b = await cf.ensure(slow, null);
    await control(slow, { ssl: "validation_timed_out" });
    expect((await cf.ensure(slow, b.ref)).outcome).toEqual({ kind: "failed", reason: "Cloudflare could not issue the certificate (validation_timed_out)." });
  });
});
