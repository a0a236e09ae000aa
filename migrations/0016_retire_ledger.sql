-- The retire ledger (owner: src/apps/retire-ledger.ts): one row per instance a switch replaced,
-- written in the same D1 batch as the switch, deleted once the instance is stopped, removed, its
-- port freed and its image removed when no kept deploy needs it.
CREATE TABLE `retire_ledger` (
	`instance_id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`engine` text,
	`node` text,
	`port` integer,
	`image` text,
	`serving` integer NOT NULL,
	`drain_until` integer NOT NULL,
	`created_at` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `retire_ledger_app_idx` ON `retire_ledger` (`app_id`, `drain_until`);
--> statement-breakpoint
ALTER TABLE `deploys` ADD `runner_alive_at` integer;
