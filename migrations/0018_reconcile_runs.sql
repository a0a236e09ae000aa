-- The reconciler's runs (owner: src/apps/reconcile-runs.ts): when each ran, over the whole engine
-- or one app, what it removed or restored, and each action with its app id; the operator's runtime
-- report shows the last. Only the most recent runs are kept.
CREATE TABLE `reconcile_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`scope` text NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer NOT NULL,
	`counts` text NOT NULL,
	`actions` text NOT NULL,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `reconcile_runs_started_idx` ON `reconcile_runs` (`started_at`);
