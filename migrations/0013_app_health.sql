ALTER TABLE `apps` ADD `health_check` text;--> statement-breakpoint
ALTER TABLE `apps` ADD `health` text;