/**
 * wrangler's local trace recording. `wrangler dev` (4.156 here) attaches a streaming tail to every
 * Worker and writes each invocation's spans into a SQLite store of its own (`state/v3/observability`
 * under the persist directory), on the same runtime thread as the Worker. Its cost grows with the
 * spans a request makes (each D1 query, Durable Object call and R2 read is one), and nothing like
 * it runs on that thread on Cloudflare. The bench turns it off for every `wrangler dev` it starts,
 * ours and the floor Worker's alike, unless `--local-traces`; `npm start` and the tests keep
 * wrangler's default.
 */

/** wrangler's switch for the recording: on unless set to `false`. */
export const LOCAL_TRACES_ENV = "X_LOCAL_OBSERVABILITY";

/** Sets the recording for every `wrangler dev` started from this process from now on. */
export function setLocalTraces(on: boolean): void {
  if (on) delete process.env[LOCAL_TRACES_ENV];
  else process.env[LOCAL_TRACES_ENV] = "false";
}
