ALTER TABLE `deploys` ADD `kind` text DEFAULT 'deploy' NOT NULL;--> statement-breakpoint
ALTER TABLE `deploys` ADD `commit_sha` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `commit_message` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `image_digest` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `plan` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `env_version` integer;--> statement-breakpoint
ALTER TABLE `deploys` ADD `image_removed` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `deploys` ADD `rollback_of` text;--> statement-breakpoint
-- Before this version every switch removed the previous image: only a live deploy's image exists.
UPDATE `deploys` SET `image_removed` = 1 WHERE `status` <> 'live';
