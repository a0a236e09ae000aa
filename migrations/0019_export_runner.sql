-- An export's runner shows it is alive (owner: src/exports/store.ts). `runner_alive_at` is its
-- last sign of life (Unix ms: accepted, claimed, a heartbeat at least every 10 s while it works, a
-- checkpoint, or the moment a retry is due); the database's ExportGate alarm queues the job once
-- more (`revivals`) when it has been silent for a minute, and fails the export after that.
ALTER TABLE `exports` ADD `runner_alive_at` integer;
--> statement-breakpoint
ALTER TABLE `exports` ADD `revivals` integer DEFAULT 0 NOT NULL;
