import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { SealedSecret } from "../sealed-column";
import { accounts } from "./accounts";

/** Where an account's alerts go, their outbox, and the incidents open. */

/** Where an account's alerts go (owner: src/notifications/); `secret` only for `webhook` channels. */
export const notificationChannels = sqliteTable(
  "notification_channels",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["webhook", "slack", "discord"] }).notNull(),
    url: text("url").notNull(),
    /** JSON array of event names. */
    events: text("events", { mode: "json" }).notNull().$type<string[]>(),
    secret: text("secret", { mode: "json" }).$type<SealedSecret>(),
    consoleOrigin: text("console_origin").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("notification_channels_account_idx").on(t.accountId)],
);

/** The alerts' outbox, one row per event and channel (owner: src/notifications/). */
export const notificationDeliveries = sqliteTable(
  "notification_deliveries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    channelId: text("channel_id").notNull(),
    event: text("event").notNull(),
    eventKey: text("event_key").notNull(),
    appId: text("app_id"),
    /** The event's JSON payload (the webhook body). */
    payload: text("payload").notNull(),
    status: text("status", { enum: ["pending", "delivered", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    statusCode: integer("status_code"),
    error: text("error"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    nextAttemptAt: integer("next_attempt_at").notNull(),
  },
  (t) => [
    uniqueIndex("notification_deliveries_key_idx").on(t.channelId, t.eventKey),
    index("notification_deliveries_account_idx").on(t.accountId, t.createdAt),
    index("notification_deliveries_pending_idx").on(t.status, t.nextAttemptAt),
  ],
);

/** Open alert incidents per subject (app id, or `account:<id>`) and kind (owner: src/notifications/). */
export const notificationIncidents = sqliteTable(
  "notification_incidents",
  {
    subject: text("subject").notNull(),
    kind: text("kind").notNull(),
    openedAt: integer("opened_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.subject, t.kind] })],
);
