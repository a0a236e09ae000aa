import { z } from "@hono/zod-openapi";

/**
 * The replies of the account's JSON routes (sign-in, security, passkeys, tokens, databases,
 * wallet, notifications, audit) as zod schemas, for their operations in the console's OpenAPI
 * document. The routes' handlers build these shapes from the actions' answers.
 */

const instant = (description: string) => z.string().openapi({ format: "date-time", description, example: "2026-01-31T09:30:00.000Z" });

export const Success = z.object({ success: z.literal(true) });

export const AccountReply = z.object({
  id: z.string().openapi({ description: "The account's id." }),
  email: z.string().openapi({ description: "The account's email address, lower-cased." }),
});

export const SessionView = z.object({
  id: z.string(),
  created_at: instant("When the session signed in."),
  last_seen_at: instant("Its last request, to the minute."),
  address: z.string().nullable(),
  user_agent: z.string().nullable(),
  current: z.boolean().openapi({ description: "True for the session asking." }),
});

export const TokenView = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().openapi({ description: "The start of the token, the only part kept in a form that can be shown." }),
  created_at: instant("When it was created."),
  last_used_at: instant("Its last use.").nullable(),
});

export const NewToken = TokenView.omit({ last_used_at: true }).extend({
  token: z.string().openapi({ description: "The secret: in this reply only, never shown again." }),
});

export const PasskeyView = z.object({
  id: z.string().openapi({ description: "The credential id (base64url)." }),
  name: z.string(),
  created_at: instant("When it was added."),
  last_used_at: instant("Its last sign-in.").nullable(),
});

/** WebAuthn options as @simplewebauthn/server makes them, for the browser's `navigator.credentials` call. */
export const WebAuthnOptions = z.looseObject({ challenge: z.string() }).openapi({ description: "Options for @simplewebauthn/browser." });

export const DatabaseView = z.object({ id: z.string(), name: z.string(), created_at: instant("When it was created.") });

const SqlOutValue = z.union([z.string(), z.number(), z.null(), z.object({ blob: z.string().openapi({ description: "A BLOB, base64." }) })]);

export const StatementResult = z.object({
  columns: z.array(z.string()),
  rows: z.array(z.array(SqlOutValue)),
  rows_written: z.number().int(),
  truncated: z.boolean().optional().openapi({ description: "True when the statement returned more rows than one reply may hold." }),
});

export const LedgerEntry = z.object({
  id: z.string(),
  at: instant("When it was booked."),
  amount: z.number().int().openapi({ description: "Whole DA: a credit is positive, a charge negative." }),
  kind: z.enum(["credit", "charge"]),
  app_id: z.string().nullable(),
  app_name: z.string().nullable(),
  period_start: instant("Start of the paid period.").nullable(),
  period_end: instant("End of the paid period.").nullable(),
  description: z.string(),
});

export const ChannelView = z.object({
  id: z.string(),
  kind: z.enum(["webhook", "slack", "discord"]),
  url: z.string(),
  events: z.array(z.string()),
  created_at: instant("When it was added."),
});

export const DeliveryView = z.object({
  id: z.string(),
  channel_id: z.string(),
  event: z.string(),
  app_id: z.string().nullable(),
  status: z.enum(["pending", "delivered", "failed"]),
  status_code: z.number().int().nullable(),
  attempts: z.number().int(),
  error: z.string().nullable(),
  created_at: instant("When the event was raised."),
  updated_at: instant("Its last attempt."),
});

export const AuditEntry = z.object({
  id: z.string(),
  at: instant("When it happened."),
  actor: z.object({ kind: z.string(), id: z.string().nullable(), name: z.string().nullable() }),
  address: z.string().nullable(),
  user_agent: z.string().nullable(),
  action: z.string(),
  resource: z.object({ kind: z.string(), id: z.string().nullable(), name: z.string().nullable() }),
  fields: z.array(z.string()).openapi({ description: "Names of the fields sent, never their values." }),
  outcome: z.enum(["done", "refused"]),
  code: z.string().nullable().openapi({ description: "A refusal's error code; null when done." }),
  request_id: z.string().nullable(),
});
