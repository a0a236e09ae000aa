import type { Context } from "hono";
import type { z } from "zod";
import { invalid } from "./errors";

/** A sentence naming the first bad field, e.g. `name: Too small`. */
export function describeIssues(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "The request is not valid.";
  const field = issue.path.join(".");
  return field ? `${field}: ${issue.message}` : issue.message;
}

/** Reads and validates a JSON body; a missing, malformed or wrong body is 400 INVALID_REQUEST. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw invalid("The body must be a JSON object.");
  }
  const result = schema.safeParse(body);
  if (!result.success) throw invalid(describeIssues(result.error));
  return result.data;
}
