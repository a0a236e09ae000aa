import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Child } from "hono/jsx";

/**
 * The `/docs` reference page: the OpenAPI document rendered on the server as plain HTML with
 * inline styles, so it reads the same offline and behind a strict CSP (no scripts, no CDN).
 * Everything on it comes from the document, so the page and `openapi.json` cannot disagree.
 */

type OpenApiDocument = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;

/** The parts of a JSON Schema the page shows. */
interface Schema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface Response {
  description?: string;
  headers?: Record<string, { description?: string; required?: boolean; schema?: Schema }>;
  content?: Record<string, { schema?: Schema }>;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  responses?: Record<string, Response>;
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

const STYLE = `
body{font:16px/1.55 system-ui,sans-serif;max-width:980px;margin:2rem auto;padding:0 1rem;color:#1d2330}
h1{margin-bottom:.2rem}h2{margin-top:2.5rem;border-top:1px solid #d8dce4;padding-top:1.2rem}
code{background:#f1f3f7;padding:.05rem .3rem;border-radius:4px;font-size:.92em}
table{border-collapse:collapse;width:100%;margin:.6rem 0 1.2rem}th,td{border:1px solid #d8dce4;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f7fa}.method{font-weight:700;text-transform:uppercase;padding:.1rem .45rem;border-radius:4px;background:#1d2330;color:#fff}
.muted{color:#5b6475}ul{margin:.2rem 0;padding-left:1.2rem}`;

/** Inline text of the document: `backticks` become <code>, blank lines new paragraphs. */
function Prose({ text }: { text?: string }) {
  if (!text) return null;
  return (
    <>
      {text.split("\n\n").map((paragraph) => (
        <p>{paragraph.split("`").map((part, i) => (i % 2 === 1 ? <code>{part}</code> : part))}</p>
      ))}
    </>
  );
}

function Inline({ text }: { text?: string }) {
  if (!text) return null;
  return <>{text.split("`").map((part, i) => (i % 2 === 1 ? <code>{part}</code> : part))}</>;
}

/** One line for a schema's type: `string (uuid)`, `one of: a, b`, `false`. */
function typeOf(schema: Schema | undefined): Child {
  if (!schema) return "";
  if (schema.const !== undefined) return <code>{JSON.stringify(schema.const)}</code>;
  if (schema.enum?.length === 1) return <code>{String(schema.enum[0])}</code>;
  if (schema.enum) return <>one of: {schema.enum.map((v, i) => <>{i > 0 ? ", " : ""}<code>{String(v)}</code></>)}</>;
  const type = Array.isArray(schema.type) ? schema.type.join(" | ") : (schema.type ?? "any");
  return schema.format ? `${type} (${schema.format})` : type;
}

function Fields({ schema }: { schema?: Schema }) {
  if (!schema?.properties) return <span class="muted">{typeOf(schema)}</span>;
  return (
    <ul>
      {Object.entries(schema.properties).map(([name, field]) => (
        <li>
          <code>{name}</code> {typeOf(field)}
          {schema.required?.includes(name) ? "" : " (optional)"}
          {field.description ? <> - <Inline text={field.description} /></> : ""}
        </li>
      ))}
    </ul>
  );
}

function ResponseRow({ status, response }: { status: string; response: Response }) {
  const content = Object.entries(response.content ?? {});
  return (
    <tr>
      <td><strong>{status}</strong></td>
      <td><Inline text={response.description} /></td>
      <td>{content.map(([type]) => <div><code>{type}</code></div>)}</td>
      <td>
        {Object.entries(response.headers ?? {}).map(([name, header]) => (
          <div><code>{name}</code> <Inline text={header.description} /></div>
        ))}
      </td>
      <td>{content.map(([, media]) => <Fields schema={media.schema} />)}</td>
    </tr>
  );
}

function OperationSection({ method, path, op }: { method: string; path: string; op: Operation }) {
  const needsToken = (op.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
  return (
    <section id={op.operationId}>
      <h2><span class="method">{method}</span> <code>{path}</code></h2>
      <p><strong>{op.summary}</strong></p>
      <Prose text={op.description} />
      <p>Authentication: {needsToken ? <code>Authorization: Bearer &lt;API_TOKEN&gt;</code> : "none (declares no security requirement)"}</p>
      {op.parameters?.length ? (
        <table>
          <tr><th>Parameter</th><th>In</th><th>Type</th><th>Required</th><th>Meaning</th></tr>
          {op.parameters.map((p) => (
            <tr><td><code>{p.name}</code></td><td>{p.in}</td><td>{typeOf(p.schema)}</td><td>{p.required ? "yes" : "no"}</td><td><Inline text={p.description} /></td></tr>
          ))}
        </table>
      ) : null}
      <table>
        <tr><th>Status</th><th>Meaning</th><th>Content type</th><th>Headers</th><th>Body</th></tr>
        {Object.entries(op.responses ?? {}).map(([status, response]) => <ResponseRow status={status} response={response} />)}
      </table>
    </section>
  );
}

/** Every `code` the document can answer with, by status and operation; a non-JSON error has none. */
function errorCodes(operations: { op: Operation }[]): { code?: string; status: string; operation: string; plain: string }[] {
  return operations.flatMap(({ op }) =>
    Object.entries(op.responses ?? {})
      .filter(([status]) => Number(status) >= 400)
      .flatMap(([status, response]) => {
        const media = Object.entries(response.content ?? {});
        const codes = media.flatMap(([, m]) => m.schema?.properties?.code?.enum ?? []).map(String);
        const plain = media.map(([type]) => type).join(", ");
        return (codes.length ? codes : [undefined]).map((code) => ({ code, status, operation: op.summary ?? "", plain }));
      }),
  );
}

/** The whole page as an HTML string. */
export function renderDocsPage(doc: OpenApiDocument): string {
  const operations = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method] as Operation })),
  );
  const page = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${doc.info.title} ${doc.info.version}`}</title>
        <style>{STYLE}</style>
      </head>
      <body>
        <h1>{doc.info.title}</h1>
        <p class="muted">Version {doc.info.version} · machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI {doc.openapi})</p>
        <Prose text={doc.info.description} />
        <ul>{operations.map(({ method, path, op }) => <li><a href={`#${op.operationId}`}>{op.summary}</a>: <code>{method.toUpperCase()} {path}</code></li>)}</ul>
        {operations.map((o) => <OperationSection {...o} />)}
        <h2>Error codes</h2>
        <table>
          <tr><th>Code</th><th>Status</th><th>Operation</th></tr>
          {errorCodes(operations).map((row) => (
            <tr><td>{row.code ? <code>{row.code}</code> : <span class="muted">(no code; {row.plain})</span>}</td><td>{row.status}</td><td>{row.operation}</td></tr>
          ))}
        </table>
      </body>
    </html>
  );
  return `<!doctype html>${page.toString()}`;
}
