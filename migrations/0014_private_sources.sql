ALTER TABLE `apps` ADD `source_token` text;--> statement-breakpoint
ALTER TABLE `apps` ADD `webhook_secret` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `kind` text DEFAULT 'deploy' NOT NULL;