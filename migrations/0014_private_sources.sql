ALTER TABLE `apps` ADD `source_token` text;--> statement-breakpoint
ALTER TABLE `apps` ADD `webhook_secret` text;
