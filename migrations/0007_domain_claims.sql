CREATE TABLE `expired_domain_claims` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`hostname` text NOT NULL,
	`expired_at` integer NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `expired_domain_claims_app_idx` ON `expired_domain_claims` (`app_id`,`expired_at`);--> statement-breakpoint
DROP INDEX `custom_domains_hostname_idx`;--> statement-breakpoint
ALTER TABLE `custom_domains` ADD `token` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `custom_domains` ADD `waiting_since` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `custom_domains_app_hostname_idx` ON `custom_domains` (`app_id`,`hostname`);--> statement-breakpoint
CREATE UNIQUE INDEX `custom_domains_held_idx` ON `custom_domains` (`hostname`) WHERE `status` IN ('verifying', 'active');--> statement-breakpoint
CREATE INDEX `custom_domains_hostname_idx` ON `custom_domains` (`hostname`);--> statement-breakpoint
UPDATE `custom_domains` SET `token` = lower(hex(randomblob(16))) WHERE `token` = '';--> statement-breakpoint
UPDATE `custom_domains` SET `waiting_since` = CAST(strftime('%s', 'now') AS INTEGER) * 1000 WHERE `status` IN ('pending_dns', 'error');;--> statement-breakpoint
UPDATE `custom_domains` SET `next_check_at` = CAST(strftime('%s', 'now') AS INTEGER) * 1000 WHERE `status` = 'active' AND `next_check_at` IS NULL;