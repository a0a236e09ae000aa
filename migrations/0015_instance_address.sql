ALTER TABLE `apps` ADD `instance_engine` text;--> statement-breakpoint
ALTER TABLE `apps` ADD `instance_node` text;--> statement-breakpoint
ALTER TABLE `apps` ADD `instance_port` integer;