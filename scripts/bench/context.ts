/** What every phase of the bench shares: options, directories, the running servers, output. */
import type { Nginx } from "./nginx";
import type { BenchOptions } from "./options";
import type { WorkerProcess } from "./worker-process";

export interface BenchContext {
  options: BenchOptions;
  /** Temporary directory for databases and wrangler state. */
  dir: string;
  /** Directory nginx serves; downloaded archives are saved here. */
  archives: string;
  /** The Worker under test (`worker.server` is the current wrangler dev). */
  worker: WorkerProcess;
  nginx: Nginx;
  /** A line for the log. */
  log: (line: string) => void;
  /** A transient status line (overwritten by the next one on a terminal). */
  progress: (line: string) => void;
  /** Records an observation for the report (printed under the table). */
  note: (line: string) => void;
  /** Records a correctness check for the report. */
  check: (name: string, ok: boolean, detail: string) => void;
}
