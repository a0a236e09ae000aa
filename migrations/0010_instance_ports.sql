CREATE TABLE `instance_ports` (
	`engine` text NOT NULL,
	`port` integer NOT NULL,
	`app_id` text NOT NULL,
	`instance_name` text NOT NULL,
	`instance_id` text,
	`allocated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `instance_ports_engine_port_idx` ON `instance_ports` (`engine`,`port`);--> statement-breakpoint
CREATE INDEX `instance_ports_instance_idx` ON `instance_ports` (`engine`,`instance_id`);