CREATE TABLE `r2_cleanup` (
	`id` text PRIMARY KEY NOT NULL,
	`key` text NOT NULL,
	`upload_id` text,
	`export_id` text,
	`created_at` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `r2_cleanup_created_idx` ON `r2_cleanup` (`created_at`);--> statement-breakpoint
CREATE INDEX `r2_cleanup_export_idx` ON `r2_cleanup` (`export_id`);--> statement-breakpoint
ALTER TABLE `exports` ADD `deadline_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `exports_deadline_idx` ON `exports` (`status`,`deadline_at`);