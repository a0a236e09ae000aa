import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/context";
import { invalid } from "../../http/errors";
import { describeIssues } from "../../http/validate";
import { renderDocsPage } from "../docs-page";
import { downloadExportRoute, serveDownload } from "./download";
import { startExportHandler, startExportRoute } from "./start-export";

/** What `GET /api/v1/openapi.json` carries besides the operations. */
const DOCUMENT_INFO = {
  openapi: "3.1.0",
  info: {
    title: "Database Export API",
    version: "1.0.0",
    description: [
      "Start an export of one of your databases and download the resulting gzip archive.",
      "Every JSON error reply is `{success: false, error, code}`; branch on `code`, which never changes with wording. A 429 with a code you do not know is a wait: sleep for `Retry-After` seconds.",
      "The call-rate limit is per caller across every endpoint; replies carry the IETF draft `RateLimit-Policy` and `RateLimit` fields.",
    ].join("\n\n"),
  },
  tags: [{ name: "Exports", description: "Start an export, then poll its download link." }],
};

/**
 * The public API v1: its operations, the OpenAPI 3.1 document generated from the same zod
 * schemas that validate requests, and the `/docs` reference page rendered from that document.
 */
export function createApiV1() {
  const api = new OpenAPIHono<AppEnv>({
    // A request the schemas reject is 400 INVALID_REQUEST in the spec's envelope, via onError.
    defaultHook: (result) => {
      if (!result.success) throw invalid(describeIssues(result.error));
    },
  });
  api.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "A personal access token from the console (profile, API Tokens, Create token): `Authorization: Bearer <API_TOKEN>`.",
  });
  api.openapi(startExportRoute, startExportHandler);
  // A download's `id`, `eid` and `exp` are covered by the link's signature, which its first
  // middleware checks (signedLink): once the link is genuine they are the values the Worker signed,
  // so the schemas document them and would have nothing left to refuse. The operation is listed in
  // the document as any other and routed without the two validators, each of them a cost on every
  // poll.
  const { middleware, ...download } = downloadExportRoute;
  api.openAPIRegistry.registerPath(download);
  api.on("GET", download.path.replaceAll(/\/{(.+?)}/g, "/:$1"), ...middleware, serveDownload);

  let document: ReturnType<typeof api.getOpenAPI31Document> | undefined;
  const openApiDocument = () => (document ??= api.getOpenAPI31Document(DOCUMENT_INFO));
  api.get("/api/v1/openapi.json", (c) => c.json(openApiDocument()));
  api.get("/docs", (c) => c.html(renderDocsPage(openApiDocument())));
  return api;
}
