import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it, vi } from "vitest";
import { clockedApp } from "./api-helpers";

// SPEC.md Versioning (version 1.0.0) and both endpoints: the machine-readable description lists
// every status and error code of both operations, and passes a real OpenAPI validator.

// workerd has no host filesystem and the validator reads its OpenAPI 3.1 meta-schema with
// readFileSync; serve that same file from the bundle instead.
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const { default: metaSchema } = await import("@seriousme/openapi-schema-validator/schemas/v3.1/schema.json");
  const readFileSync = ((path: string, options: unknown) =>
    String(path).endsWith("/schemas/v3.1/schema.json") ? JSON.stringify(metaSchema) : real.readFileSync(path, options as never)) as typeof real.readFileSync;
  return { ...real, default: { ...real, readFileSync }, readFileSync };
});

const START = ["/api/v1/dbs/{id}/export", "post"] as const;
const DOWNLOAD = ["/api/v1/dbs/{id}/exports/{eid}/download", "get"] as const;

async function fetchDocument(): Promise<any> {
  const res = await clockedApp().call(new Request("http://api.test/api/v1/openapi.json"));
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
  return res.json();
}

const operation = (doc: any, [path, method]: readonly [string, string]) => doc.paths[path][method];

/** The `code` values a reply's JSON body may carry. */
const codesOf = (doc: any, op: readonly [string, string], status: string): string[] =>
  operation(doc, op).responses[status].content["application/json"].schema.properties.code.enum;

describe("GET /api/v1/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document, version 1.0.0, with exactly the two operations", async () => {
    const doc = await fetchDocument();
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    expect(Object.keys(doc.paths).sort()).toEqual([DOWNLOAD[0], START[0]].sort());
    expect(Object.keys(doc.paths[START[0]])).toEqual(["post"]);
    expect(Object.keys(doc.paths[DOWNLOAD[0]])).toEqual(["get"]);
  });

  it("is checked for real: the validator rejects the document once a path parameter is made optional", async () => {
    const broken = await fetchDocument();
    operation(broken, START).parameters[0].required = false;
    const result = await new Validator().validate(broken);
    expect(result.valid).toBe(false);
  });

  it.each([
    ["start", START, ["200", "400", "401", "404", "429"]],
    ["download", DOWNLOAD, ["200", "206", "401", "404", "410", "416", "429", "500", "503"]],
  ] as const)("documents every status of %s", async (_name, op, statuses) => {
    const documented = Object.keys(operation(await fetchDocument(), op).responses);
    for (const status of statuses) expect(documented).toContain(status);
  });

  // SPEC.md, Errors: code, status, endpoint.
  it.each([
    ["SIGNED_URL_INVALID", "401", [DOWNLOAD]],
    ["SIGNED_URL_EXPIRED", "401", [DOWNLOAD]],
    ["NOT_FOUND", "404", [DOWNLOAD]],
    ["EXPORT_EXPIRED", "410", [DOWNLOAD]],
    ["RATE_LIMIT_EXCEEDED", "429", [START, DOWNLOAD]],
    ["cooldown_active", "429", [START]],
    ["export_in_flight", "429", [START]],
    ["INTERNAL_ERROR", "500", [DOWNLOAD]],
    ["export_pending", "503", [DOWNLOAD]],
  ] as const)("documents %s as a %s reply", async (code, status, ops) => {
    const doc = await fetchDocument();
    for (const op of ops) expect(codesOf(doc, op, status)).toContain(code);
  });

  it("gives every JSON error reply the envelope {success, error, code}", async () => {
    const doc = await fetchDocument();
    for (const op of [START, DOWNLOAD]) {
      for (const [status, response] of Object.entries<any>(operation(doc, op).responses)) {
        const schema = response.content?.["application/json"]?.schema;
        if (Number(status) < 400 || !schema) continue;
        expect(schema.required, `${op[1]} ${status}`).toEqual(expect.arrayContaining(["success", "error", "code"]));
        expect(schema.properties.success.enum ?? [schema.properties.success.const]).toEqual([false]);
      }
    }
  });

  it("describes the start operation: bearer token, UUID id, {url, expires_at}, Retry-After on 429", async () => {
    const doc = await fetchDocument();
    const start = operation(doc, START);
    expect(start.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(start.parameters).toEqual([expect.objectContaining({ name: "id", in: "path", required: true, schema: expect.objectContaining({ format: "uuid" }) })]);
    expect(start.requestBody).toBeUndefined();
    const reply = start.responses["200"].content["application/json"].schema;
    expect(reply.required.sort()).toEqual(["expires_at", "url"]);
    expect(reply.properties.expires_at.format).toBe("date-time");
    expect(start.responses["429"].headers["Retry-After"]).toMatchObject({ required: true, schema: { type: "integer" } });
  });

  it("describes the download operation as SPEC.md gives it", async () => {
    const download = operation(await fetchDocument(), DOWNLOAD);
    expect(download.security).toEqual([]);
    const params = Object.fromEntries(download.parameters.map((p: any) => [`${p.in}:${p.name}`, p]));
    expect(Object.keys(params).sort()).toEqual(["header:Range", "path:eid", "path:id", "query:exp", "query:sig"]);
    expect(params["query:exp"]).toMatchObject({ required: true, schema: { type: "integer", format: "int64" } });
    expect(params["query:sig"]).toMatchObject({ required: true, schema: { type: "string" } });
    expect(params["header:Range"].required).toBe(false);
    const r = download.responses;
    expect(Object.keys(r["200"].content)).toEqual(["application/gzip"]);
    expect(r["200"].headers["X-Export-SHA256"]).toBeDefined();
    expect(Object.keys(r["206"].content).sort()).toEqual(["application/gzip", "multipart/byteranges"]);
    expect(Object.keys(r["206"].headers).sort()).toEqual(["Content-Range", "X-Export-SHA256"]);
    expect(Object.keys(r["416"].content)).toEqual(["text/plain"]);
    expect(r["416"].headers["Content-Range"]).toBeDefined();
    expect(r["429"].headers["Retry-After"].schema.type).toBe("integer");
    expect(r["503"].headers["Retry-After"].schema.type).toBe("integer");
    const pending = r["503"].content["application/json"].schema;
    expect(pending.required).toEqual(expect.arrayContaining(["success", "error", "code", "status"]));
    expect(pending.properties.status.enum).toEqual(["pending", "running"]);
  });
});

describe("GET /docs", () => {
  it("is a server-rendered page with both operations, every status and code, and nothing loaded from elsewhere", async () => {
    const res = await clockedApp().call(new Request("http://api.test/docs"));
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain("/api/v1/dbs/{id}/export");
    expect(html).toContain("/api/v1/dbs/{id}/exports/{eid}/download");
    expect(html).toContain("1.0.0");
    for (const status of ["200", "206", "400", "401", "404", "410", "416", "429", "500", "503"]) expect(html).toContain(`<strong>${status}</strong>`);
    for (const code of ["SIGNED_URL_INVALID", "SIGNED_URL_EXPIRED", "NOT_FOUND", "EXPORT_EXPIRED", "RATE_LIMIT_EXCEEDED", "cooldown_active", "export_in_flight", "INTERNAL_ERROR", "export_pending", "UNAUTHORIZED", "INVALID_REQUEST"]) {
      expect(html).toContain(`<code>${code}</code>`);
    }
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//i);
  });

  it("answers other methods with 405", async () => {
    const app = clockedApp();
    expect((await app.call(new Request("http://api.test/docs", { method: "POST" }))).status).toBe(405);
    expect((await app.call(new Request("http://api.test/api/v1/openapi.json", { method: "DELETE" }))).status).toBe(405);
  });
});
