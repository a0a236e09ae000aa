CREATE TABLE `subdomain_holds` (
	`subdomain` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`held_until` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `domain_last_owners` (
	`hostname` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`active_at` integer NOT NULL
);
--> statement-breakpoint
INSERT OR REPLACE INTO `domain_last_owners` (`hostname`, `account_id`, `active_at`)
SELECT `custom_domains`.`hostname`, `apps`.`account_id`, CAST(strftime('%s', 'now') AS INTEGER) * 1000
FROM `custom_domains` JOIN `apps` ON `apps`.`id` = `custom_domains`.`app_id`
WHERE `custom_domains`.`status` = 'active';
