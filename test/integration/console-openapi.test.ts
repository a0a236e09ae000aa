import { Validator } from "@seriousme/openapi-schema-validator";
import { exports as workerExports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { ORIGIN, signedUp } from "./helpers";

// The console's JSON routes are documented at GET /console/api/openapi.json, built from the same
// zod schemas that validate their requests; checked by the validator the public document passes.

// workerd has no host filesystem and the validator reads its OpenAPI 3.1 meta-schema with
// readFileSync; serve that same file from the bundle instead.
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const { default: metaSchema } = await import("@seriousme/openapi-schema-validator/schemas/v3.1/schema.json");
  const readFileSync = ((path: string, options: unknown) =>
    String(path).endsWith("/schemas/v3.1/schema.json") ? JSON.stringify(metaSchema) : real.readFileSync(path, options as never)) as typeof real.readFileSync;
  return { ...real, default: { ...real, readFileSync }, readFileSync };
});

const PREFIX = "/console/api";
const DOCUMENT = `${PREFIX}/openapi.json`;

async function fetchDocument(): Promise<any> {
  const res = await workerExports.default.fetch(new Request(ORIGIN + DOCUMENT));
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
  return res.json();
}

/** Every `METHOD path` the app routes under /console/api (but the document itself), in the document's spelling (`{id}`). */
function registeredOperations(): string[] {
  const operations = new Set<string>();
  for (const route of createApp().routes) {
    if (route.method === "ALL" || !route.path.startsWith(`${PREFIX}/`) || route.path === DOCUMENT) continue;
    operations.add(`${route.method.toLowerCase()} ${route.path.replace(/:([^/]+)/g, "{$1}")}`);
  }
  return [...operations].sort();
}

function documentedOperations(doc: any): string[] {
  return Object.entries<Record<string, unknown>>(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`)).sort();
}

describe("GET /console/api/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const doc = await fetchDocument();
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(doc.openapi).toBe("3.1.0");
  });

  it("documents every console JSON route the app registers, and nothing else", async () => {
    const registered = registeredOperations();
    expect(registered).toContain("post /console/api/apps/{id}/plan");
    expect(documentedOperations(await fetchDocument())).toEqual(registered);
  });

  it("gives every operation an operationId of its own and every JSON error reply the envelope {success, error, code}", async () => {
    const doc = await fetchDocument();
    const ids = new Set<string>();
    for (const item of Object.values<Record<string, any>>(doc.paths)) {
      for (const operation of Object.values<any>(item)) {
        expect(ids.has(operation.operationId), operation.operationId).toBe(false);
        ids.add(operation.operationId);
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          const schema = response.content?.["application/json"]?.schema;
          if (Number(status) < 400 || !schema) continue;
          expect(schema.required, `${operation.operationId} ${status}`).toEqual(expect.arrayContaining(["success", "error", "code"]));
        }
      }
    }
  });

  it("documents the app operations' bodies and replies from their schemas", async () => {
    const doc = await fetchDocument();
    const create = doc.paths[`${PREFIX}/apps`].post;
    expect(create.requestBody.content["application/json"].schema.required).toEqual(expect.arrayContaining(["name", "repository"]));
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["201", "400", "401"]));
    const app = doc.paths[`${PREFIX}/apps/{id}`].get.responses["200"].content["application/json"].schema;
    const resolved = app.$ref ? doc.components.schemas[app.$ref.split("/").pop()] : app;
    expect(resolved.required).toEqual(expect.arrayContaining(["id", "status", "latest_deploy", "env", "webhook"]));
    expect(doc.paths[`${PREFIX}/apps/{id}/logs/stream`].get.responses["200"].content).toHaveProperty("text/event-stream");
  });
});

describe("request validation of the console's operations", () => {
  it("answers a refused field with 400 INVALID_REQUEST naming it, and a body that is not JSON as readJson did", async () => {
    const client = await signedUp();
    const named = await client.call("POST", `${PREFIX}/apps`, { name: 42, repository: "https://github.com/acme/shop" });
    expect(named.status).toBe(400);
    expect(await named.json()).toEqual({ success: false, code: "INVALID_REQUEST", error: expect.stringMatching(/^name: /) });
    for (const headers of [{ "Content-Type": "application/json" }, { "Content-Type": "text/plain" }]) {
      const garbage = await client.call("POST", `${PREFIX}/apps`, undefined, headers);
      expect(garbage.status).toBe(400);
      expect(await garbage.json()).toEqual({ success: false, code: "INVALID_REQUEST", error: "The body must be a JSON object." });
    }
  });

  it("still answers another account's app with 404 before reading a bad body", async () => {
    const client = await signedUp();
    const res = await client.call("PATCH", `${PREFIX}/apps/00000000-0000-4000-8000-000000000000`, { nope: true });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ success: false, code: "NOT_FOUND" });
  });
});
