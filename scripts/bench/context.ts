/** What every phase of the bench shares: options, directories, the running servers, output. */
import type { DevServer } from "../lib/dev-server";
import type { RssByRole } from "./memory";
import type { Nginx } from "./nginx";
import type { BenchOptions } from "./options";

export interface BenchContext {
  options: BenchOptions;
  /** Temporary directory for databases and wrangler state. */
  dir: string;
  /** Directory nginx serves; downloaded archives are saved here. */
  archives: string;
  server: DevServer;
  nginx: Nginx;
  /** Resident memory of the workerd processes once started, before any data was loaded. */
  idleRss: RssByRole;
  /** A line for the log. */
  log: (line: string) => void;
  /** A transient status line (overwritten by the next one on a terminal). */
  progress: (line: string) => void;
  /** Records an observation for the report (printed under the table). */
  note: (line: string) => void;
  /** Records a correctness check for the report. */
  check: (name: string, ok: boolean, detail: string) => void;
}
