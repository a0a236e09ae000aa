CREATE TABLE `ledger_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`at` integer NOT NULL,
	`amount` integer NOT NULL,
	`kind` text NOT NULL,
	`app_id` text,
	`app_name` text,
	`period_start` integer,
	`period_end` integer,
	`description` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `ledger_account_idx` ON `ledger_entries` (`account_id`,`at`);--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_app_period_idx` ON `ledger_entries` (`app_id`,`period_start`);--> statement-breakpoint
ALTER TABLE `apps` ADD `billing_charged` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `apps` ADD `period_start` integer;--> statement-breakpoint
ALTER TABLE `apps` ADD `period_end` integer;--> statement-breakpoint
ALTER TABLE `apps` ADD `stopped_since` integer;--> statement-breakpoint
ALTER TABLE `apps` ADD `payment_due` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `apps` ADD `paid_price` integer;