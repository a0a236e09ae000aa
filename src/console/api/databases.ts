import { createRoute, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../http/context";
import { perRequest } from "../../http/per-request";
import { DatabaseName, SqlRequest, createDatabase, deleteDatabase, listDatabases, ownedDatabase, runSql } from "../actions/databases";
import { orThrow } from "../actions/outcome";
import { DatabaseView, StatementResult, Success } from "./account-schemas";
import { SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonBody, jsonBodyFirst, jsonReply, pathParam } from "./openapi";

/** Managed databases under `/console/api/databases`: list, create, delete, run SQL. */

const tags = ["Databases"];
const idParam = z.object({ id: pathParam("id", "The database's id.") });
const NOT_FOUND = errorReply("No such database in the account; another account's answers the same.", ["NOT_FOUND"]);

/** The path's database, looked up once: an SQL run on another account's database is 404 before its body is read. */
const owned = perRequest((c) => ownedDatabase(c, c.req.param("id")!));
const ownedFirst: MiddlewareHandler<AppEnv> = async function ownedFirst(c, next) {
  await owned.get(c);
  await next();
};

const listRoute = createRoute({
  method: "get",
  path: "/",
  operationId: "listDatabases",
  tags,
  summary: "List the account's databases",
  responses: { 200: jsonReply(z.object({ databases: z.array(DatabaseView) }), "The databases, newest first."), ...SIGNED_IN_REPLIES },
});

const createDatabaseRoute = createRoute({
  method: "post",
  path: "/",
  operationId: "createDatabase",
  tags,
  summary: "Create a database",
  middleware: [jsonBodyFirst] as const,
  request: { body: jsonBody(DatabaseName, "The database's name.") },
  responses: { 201: jsonReply(DatabaseView, "Created, empty."), 400: errorReply("The name is missing or too long.", ["INVALID_REQUEST"]), ...SIGNED_IN_REPLIES },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/{id}",
  operationId: "deleteDatabase",
  tags,
  summary: "Delete a database",
  description: "Its data, its exports and their archives are removed for good.",
  request: { params: idParam },
  responses: { 200: jsonReply(Success, "Deleted."), 404: NOT_FOUND, ...SIGNED_IN_REPLIES },
});

const sqlRoute = createRoute({
  method: "post",
  path: "/{id}/sql",
  operationId: "runSql",
  tags,
  summary: "Run SQL",
  description: "SQLite. Several statements separated by semicolons run as one transaction: all or nothing. Each statement's rows are cut to what one reply may hold (`truncated`).",
  middleware: [ownedFirst, jsonBodyFirst] as const,
  request: { params: idParam, body: jsonBody(SqlRequest, "The SQL and its `?` parameters (a BLOB as `{blob: base64}`).") },
  responses: {
    200: jsonReply(z.object({ results: z.array(StatementResult) }), "Every statement's result."),
    400: errorReply("The body is not valid, or a statement failed (`Statement 2: ...`); nothing was written.", ["INVALID_REQUEST"]),
    404: NOT_FOUND,
    ...SIGNED_IN_REPLIES,
  },
});

export const databaseRoutes = consoleRouter()
  .openapi(listRoute, async (c) => c.json({ databases: await listDatabases(c) }, 200))
  .openapi(createDatabaseRoute, async (c) => c.json(await createDatabase(c, c.req.valid("json").name), 201))
  .openapi(deleteRoute, async (c) => {
    await deleteDatabase(c, c.req.valid("param").id);
    return c.json({ success: true as const }, 200);
  })
  .openapi(sqlRoute, async (c) => c.json({ results: orThrow(await runSql(c, await owned.get(c), c.req.valid("json"))).results }, 200));
