import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context";
import { invalid } from "../../http/errors";
import { readJson } from "../../http/validate";
import {
  createDatabase,
  getOwnedDatabase,
  listDatabases,
  managedDatabase,
} from "../../databases/service";
import { deleteDatabase } from "../../exports/delete-database";

export const DatabaseName = z.object({
  name: z
    .string({ message: "Give the database a name." })
    .trim()
    .min(1, "Give the database a name.")
    .max(64, "Use at most 64 characters for the database name."),
});

const SqlValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.object({ blob: z.base64() })]);

export const SqlRequest = z.object({
  sql: z.string({ message: "Send the SQL to run." }).min(1, "Send the SQL to run.").max(100_000, "The SQL is longer than 100000 characters."),
  params: z.array(SqlValue).max(100, "At most 100 parameters.").optional(),
});

export const databaseRoutes = new Hono<AppEnv>()
  .get("/", async (c) => c.json({ databases: await listDatabases(c.env, c.get("accountId")!) }))
  .post("/", async (c) => {
    const { name } = await readJson(c, DatabaseName);
    const { now, uuid } = c.get("deps");
    return c.json(await createDatabase(c.env, c.get("accountId")!, name, now(), uuid()), 201);
  })
  .delete("/:id", async (c) => {
    await deleteDatabase(c.env, c.get("accountId")!, c.req.param("id"), c.get("deps").now());
    return c.json({ success: true });
  })
  .post("/:id/sql", async (c) => {
    const row = await getOwnedDatabase(c.env, c.get("accountId")!, c.req.param("id"));
    const { sql, params } = await readJson(c, SqlRequest);
    const outcome = await managedDatabase(c.env, row.id).execute(sql, params ?? []);
    if (!outcome.ok) throw invalid(`Statement ${outcome.statement + 1}: ${outcome.error}`);
    return c.json({ results: outcome.results });
  });
