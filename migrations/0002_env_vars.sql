CREATE TABLE `app_env_vars` (
	`app_id` text NOT NULL,
	`key` text NOT NULL,
	`position` integer NOT NULL,
	`kid` text NOT NULL,
	`iv` text NOT NULL,
	`ciphertext` text NOT NULL,
	PRIMARY KEY(`app_id`, `key`),
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `apps` ADD `env_version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `apps` ADD `env_applied_version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `apps` ADD `env_failure` text;