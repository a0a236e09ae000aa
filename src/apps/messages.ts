/** The body of one deploy-jobs queue message: one per pressed Deploy. */
export interface DeployJobMessage {
  appId: string;
  deployId: string;
}

/** Said in the deploy's log and on the app page when Deploy was pressed on a stopped app. */
export const BUILT_STOPPED = "Built. The app stays stopped; Start runs this version.";

/** The latest deploy was built while the app was stopped: it stays stopped until Start runs that version. */
export function builtWhileStopped(app: { status: string; latest_deploy: { status: string; started_at: string } | null; billing: { stopped_since: string | null } }): boolean {
  const latest = app.latest_deploy;
  const since = app.billing.stopped_since;
  return app.status === "stopped" && latest?.status === "live" && since !== null && Date.parse(latest.started_at) >= Date.parse(since);
}
