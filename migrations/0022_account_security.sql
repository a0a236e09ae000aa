-- Sessions you can see and end: a public id (the cookie's hash stays the lookup key and is never
-- shown), when the session was last seen, and the client address and user agent it signed in from.
ALTER TABLE `sessions` ADD `id` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `last_seen_at` integer;--> statement-breakpoint
ALTER TABLE `sessions` ADD `address` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `user_agent` text;--> statement-breakpoint
UPDATE `sessions` SET `id` = lower(hex(randomblob(16))), `last_seen_at` = `created_at`;--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_id_idx` ON `sessions` (`id`);--> statement-breakpoint
-- Two-step sign-in (TOTP, RFC 6238): the secret sealed under ENV_ENCRYPTION_KEY, set up first and
-- enabled once a code from it was entered; last_step is the newest time step accepted, so no
-- code (nor an older one) is accepted twice.
CREATE TABLE `account_totp` (
	`account_id` text PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`created_at` integer NOT NULL,
	`enabled_at` integer,
	`last_step` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- The ten one-time recovery codes, as SHA-256 hashes; used_at once spent.
CREATE TABLE `recovery_codes` (
	`account_id` text NOT NULL,
	`code_hash` text NOT NULL,
	`used_at` integer,
	PRIMARY KEY(`account_id`, `code_hash`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
