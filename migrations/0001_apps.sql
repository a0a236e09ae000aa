CREATE TABLE `apps` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`repository` text NOT NULL,
	`branch` text NOT NULL,
	`root_directory` text NOT NULL,
	`dockerfile_path` text NOT NULL,
	`subdomain` text NOT NULL,
	`plan` text NOT NULL,
	`status` text NOT NULL,
	`created_at` integer NOT NULL,
	`first_deploy_at` integer,
	`instance_id` text,
	`instance_url` text,
	`image` text,
	`live_deploy_id` text,
	`port` integer,
	`port_source` text,
	`port_reason` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `apps_subdomain_idx` ON `apps` (`subdomain`);--> statement-breakpoint
CREATE INDEX `apps_account_idx` ON `apps` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `deploys` (
	`id` text PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`status` text NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`image` text,
	`instance_id` text,
	`port` integer,
	`port_source` text,
	`port_reason` text,
	`failure` text,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deploys_app_idx` ON `deploys` (`app_id`,`started_at`);