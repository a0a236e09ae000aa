import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { SealedSecret } from "../sealed-column";

/** Accounts and what signs them in: sessions, two-step sign-in, API tokens, passkeys, and the audit log. */

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  /** `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>` */
  passwordHash: text("password_hash").notNull(),
  createdAt: integer("created_at").notNull(),
});

export const sessions = sqliteTable(
  "sessions",
  {
    /** SHA-256 (hex) of the cookie value; the cookie itself is never stored. */
    idHash: text("id_hash").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    /** The session's public id (random hex), the one the sessions list shows and ends. */
    id: text("id").notNull(),
    lastSeenAt: integer("last_seen_at"),
    /** The client address and user agent at sign-in, as the sessions list shows them. */
    address: text("address"),
    userAgent: text("user_agent"),
  },
  (t) => [index("sessions_account_idx").on(t.accountId), uniqueIndex("sessions_id_idx").on(t.id)],
);

/**
 * Two-step sign-in (TOTP, RFC 6238) of an account: the secret, sealed like an env value
 * (src/auth/totp-store.ts); `enabledAt` null while set up but not yet confirmed with a code;
 * `lastStep` the newest time step accepted (no code is accepted twice). Owner: src/auth/.
 */
export const accountTotp = sqliteTable("account_totp", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  secret: text("secret", { mode: "json" }).notNull().$type<SealedSecret>(),
  createdAt: integer("created_at").notNull(),
  enabledAt: integer("enabled_at"),
  lastStep: integer("last_step"),
});

/** One-time recovery codes of an account's two-step sign-in, as SHA-256 hex. Owner: src/auth/. */
export const recoveryCodes = sqliteTable(
  "recovery_codes",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.codeHash] })],
);

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** The first characters of the secret, safe to show (`dbx_AbCd`). */
    prefix: text("prefix").notNull(),
    /** SHA-256 (hex) of the whole secret: the only form in which it is kept. */
    tokenHash: text("token_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [uniqueIndex("api_tokens_hash_idx").on(t.tokenHash), index("api_tokens_account_idx").on(t.accountId)],
);

/** Passkeys (WebAuthn credentials); owner: src/auth/. The id is the credential id (base64url). */
export const passkeys = sqliteTable(
  "passkeys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** The COSE public key, base64url. */
    publicKey: text("public_key").notNull(),
    counter: integer("counter").notNull().default(0),
    /** JSON array of the authenticator's transports, as it reported them. */
    transports: text("transports"),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("passkeys_account_idx").on(t.accountId)],
);

/** One-use WebAuthn challenges (`register` with its account, `signin` without); owner: src/auth/. */
export const passkeyChallenges = sqliteTable("passkey_challenges", {
  challenge: text("challenge").primaryKey(),
  kind: text("kind", { enum: ["register", "signin"] }).notNull(),
  accountId: text("account_id"),
  expiresAt: integer("expires_at").notNull(),
});

/** The append-only audit log (owner: src/auth/audit-store.ts); `fields` is a JSON array of names, never values. */
export const auditLog = sqliteTable(
  "audit_log",
  {
    /** Sortable: the time (13 digits) then random hex, so newest first is id order. */
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    at: integer("at").notNull(),
    actorKind: text("actor_kind").notNull(),
    actorId: text("actor_id"),
    actorName: text("actor_name"),
    address: text("address"),
    userAgent: text("user_agent"),
    action: text("action").notNull(),
    resourceKind: text("resource_kind").notNull(),
    resourceId: text("resource_id"),
    resourceName: text("resource_name"),
    fields: text("fields").notNull(),
    outcome: text("outcome", { enum: ["done", "refused"] }).notNull(),
    code: text("code"),
    requestId: text("request_id"),
  },
  (t) => [index("audit_log_account_idx").on(t.accountId, t.at), index("audit_log_at_idx").on(t.at)],
);
