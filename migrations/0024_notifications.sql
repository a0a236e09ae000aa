-- Alerts (docs/alerts.md); owner: src/notifications/.
-- A channel is where an account's events go: a signed webhook, or a Slack or Discord incoming
-- webhook. `events` is a JSON array of event names; `secret` (webhooks only) is sealed like an
-- environment value and shown once; `console_origin` is the console's origin the channel was made
-- on, for the links in the payloads.
CREATE TABLE `notification_channels` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
	`kind` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`secret` text,
	`console_origin` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `notification_channels_account_idx` ON `notification_channels` (`account_id`);
--> statement-breakpoint
-- The outbox: one row per event and channel, written before its queue message is sent, so a
-- delivery is never only in memory. `event_key` names the incident (a deploy id, an app's open
-- incident), so one incident is delivered once per channel.
CREATE TABLE `notification_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`channel_id` text NOT NULL,
	`event` text NOT NULL,
	`event_key` text NOT NULL,
	`app_id` text,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`status_code` integer,
	`error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`next_attempt_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_deliveries_key_idx` ON `notification_deliveries` (`channel_id`, `event_key`);
--> statement-breakpoint
CREATE INDEX `notification_deliveries_account_idx` ON `notification_deliveries` (`account_id`, `created_at`);
--> statement-breakpoint
CREATE INDEX `notification_deliveries_pending_idx` ON `notification_deliveries` (`status`, `next_attempt_at`);
--> statement-breakpoint
-- Open incidents per subject (an app's id, or `account:<id>` for the wallet) and kind (crashed,
-- unhealthy, memory_high, errors_high, wallet_low): a row while the condition holds; its event is
-- sent when the row is made, and the row removed when the condition clears, so an incident is sent
-- once, not once per check.
CREATE TABLE `notification_incidents` (
	`subject` text NOT NULL,
	`kind` text NOT NULL,
	`opened_at` integer NOT NULL,
	PRIMARY KEY(`subject`, `kind`)
);
