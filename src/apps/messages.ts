/** The body of one deploy-jobs queue message: one per pressed Deploy. */
export interface DeployJobMessage {
  appId: string;
  deployId: string;
}
