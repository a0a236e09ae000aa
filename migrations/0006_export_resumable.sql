ALTER TABLE `exports` ADD `step` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `exports` ADD `progress` text;