CREATE TABLE `custom_domains` (
	`id` text PRIMARY KEY NOT NULL,
	`hostname` text NOT NULL,
	`app_id` text NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`route_ready` integer DEFAULT false NOT NULL,
	`https` integer DEFAULT false NOT NULL,
	`provider_ref` text,
	`created_at` integer NOT NULL,
	`last_checked_at` integer,
	`next_check_at` integer,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `custom_domains_hostname_idx` ON `custom_domains` (`hostname`);--> statement-breakpoint
CREATE INDEX `custom_domains_app_idx` ON `custom_domains` (`app_id`,`created_at`);