import { z } from "@hono/zod-openapi";
import type { ErrorCode } from "../../http/errors";

/**
 * Pieces shared by the public API's operations. One zod schema per piece drives request
 * validation, handler types and the OpenAPI document alike.
 */

/** Any 8-4-4-4-12 hexadecimal UUID, as `isUuid` accepts; ids are compared lower-cased. */
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** A UUID path parameter. */
export function uuidPathParam(name: string, description: string) {
  return z
    .string()
    .regex(UUID, "must be a UUID")
    .openapi({ param: { name, in: "path" }, format: "uuid", description, example: "0b8f1a4e-3c2d-4e5f-8a9b-0c1d2e3f4a5b" });
}

/** The error envelope (docs/api.md, export rule 6), its `code` limited to the codes one reply can carry. */
export function errorEnvelope<C extends ErrorCode>(codes: readonly [C, ...C[]], example: string) {
  return z.object({
    success: z.literal(false).openapi({ description: "Always `false` on an error reply." }),
    error: z.string().openapi({ description: "Short human-readable sentence. Its wording may change.", example }),
    code: z.enum(codes).openapi({ description: "Machine-readable label, stable across wording changes. Branch on this." }),
  });
}

/** A JSON error reply: the envelope as the only content. */
export function errorReply<C extends ErrorCode>(
  description: string,
  codes: readonly [C, ...C[]],
  example: string,
  headers?: Record<string, { description: string; schema: { type: "integer" | "string"; minimum?: number }; required?: boolean }>,
) {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { "application/json": { schema: errorEnvelope(codes, example) } },
  };
}

/** `Retry-After` on a wait reply: whole seconds. */
export function retryAfter(description: string) {
  return { "Retry-After": { description, required: true, schema: { type: "integer" as const, minimum: 1 } } };
}

/** The IETF draft rate-limit fields sent on every reply that passed the rate limit. */
export const rateLimitFields = {
  "RateLimit-Policy": {
    description:
      'Call-rate policy (draft-ietf-httpapi-ratelimit-headers), e.g. `"api";q=30;w=15`: a burst of `q` calls, fully recovered over `w` seconds.',
    schema: { type: "string" as const },
  },
  RateLimit: {
    description: 'Calls left now (`r`) and seconds until the whole burst is back (`t`), e.g. `"api";r=29;t=1`.',
    schema: { type: "string" as const },
  },
};

/** Headers of the 429 RATE_LIMIT_EXCEEDED reply, shared by both operations. */
export const rateLimitedHeaders = {
  "Retry-After": {
    description: "Whole seconds until the next call will pass.",
    required: true,
    schema: { type: "integer" as const, minimum: 1 },
  },
  ...rateLimitFields,
};
