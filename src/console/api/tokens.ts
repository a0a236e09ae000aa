import { Hono } from "hono";
import { z } from "zod";
import { createToken, listTokens, revokeToken } from "../../auth/token-store";
import type { AppEnv } from "../../http/context";
import { notFound } from "../../http/errors";
import { readJson } from "../../http/validate";

export const TokenName = z.object({
  name: z
    .string({ message: "Give the token a name." })
    .trim()
    .min(1, "Give the token a name.")
    .max(100, "Use at most 100 characters for the token name."),
});

export const tokenRoutes = new Hono<AppEnv>()
  .get("/", async (c) => c.json({ tokens: await listTokens(c.env, c.get("accountId")!) }))
  .post("/", async (c) => {
    const { name } = await readJson(c, TokenName);
    const { now, uuid } = c.get("deps");
    return c.json(await createToken(c.env, c.get("accountId")!, name, now(), uuid()), 201);
  })
  .delete("/:id", async (c) => {
    if (!(await revokeToken(c.env, c.get("accountId")!, c.req.param("id")))) throw notFound("No such token.");
    return c.json({ success: true });
  });
