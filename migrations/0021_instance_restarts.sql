-- Why the control plane last restarted an app's instance fresh (JSON {at, reason}), shown on the
-- app page and in its JSON: the disk watchdog's restart past the plan's disk allowance.
ALTER TABLE apps ADD COLUMN last_restart TEXT;
