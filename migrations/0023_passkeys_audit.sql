-- Passkeys (WebAuthn credentials), their one-use challenges, and the audit log; owner: src/auth/.
-- A passkey's id is its credential id (base64url); the public key is COSE, base64url.
CREATE TABLE `passkeys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
	`name` text NOT NULL,
	`public_key` text NOT NULL,
	`counter` integer DEFAULT 0 NOT NULL,
	`transports` text,
	`created_at` integer NOT NULL,
	`last_used_at` integer
);
--> statement-breakpoint
CREATE INDEX `passkeys_account_idx` ON `passkeys` (`account_id`);
--> statement-breakpoint
-- A challenge is taken (deleted) by the answer that uses it, so it serves once; a sign-in
-- challenge has no account. Expired ones are removed by the sweep.
CREATE TABLE `passkey_challenges` (
	`challenge` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`account_id` text,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
-- Append-only: one row per state change of an account or its resources (or a refused attempt).
-- Never a secret's value: `fields` holds names only. Rows older than 400 days are swept.
CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`at` integer NOT NULL,
	`actor_kind` text NOT NULL,
	`actor_id` text,
	`actor_name` text,
	`address` text,
	`user_agent` text,
	`action` text NOT NULL,
	`resource_kind` text NOT NULL,
	`resource_id` text,
	`resource_name` text,
	`fields` text NOT NULL,
	`outcome` text NOT NULL,
	`code` text,
	`request_id` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_account_idx` ON `audit_log` (`account_id`, `at`);
--> statement-breakpoint
CREATE INDEX `audit_log_at_idx` ON `audit_log` (`at`);
