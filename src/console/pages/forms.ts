import type { Context } from "hono";
import type { z } from "zod";

/** Field name -> the sentence to show next to that field. */
export type FieldErrors = Record<string, string>;

/** The first message for each top-level field of a validation error; form-wide ones under `_form`. */
export function fieldErrors(error: z.ZodError): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of error.issues) {
    const field = issue.path.length > 0 ? String(issue.path[0]) : "_form";
    out[field] ??= issue.message;
  }
  return out;
}

/** A read form: the valid data, or the errors per field; both with the text as typed. */
export type FormResult<T> =
  | { ok: true; data: T; values: Record<string, string> }
  | { ok: false; errors: FieldErrors; values: Record<string, string> };

/**
 * Reads a posted form (urlencoded or multipart): text fields only, files ignored. `values` echoes
 * what was typed (so a form shown again keeps it), `errors` names the fields that were wrong.
 */
export async function readForm<S extends z.ZodType>(c: Context, schema: S): Promise<FormResult<z.output<S>>> {
  const body = await c.req.parseBody();
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) if (typeof value === "string") values[key] = value;
  const result = schema.safeParse(values);
  return result.success ? { ok: true, data: result.data, values } : { ok: false, errors: fieldErrors(result.error), values };
}
