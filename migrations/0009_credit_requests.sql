CREATE TABLE `credit_requests` (
	`key` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`amount` integer NOT NULL,
	`note` text NOT NULL,
	`entry_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`response` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
