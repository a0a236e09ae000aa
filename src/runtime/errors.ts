/** The errors every runtime adapter throws alike, so callers can tell the app's fault from the engine's. */

/** The engine could not publish the requested host port: something outside the control plane holds it. */
export class PortTakenError extends Error {
  override readonly name = "PortTakenError";
  constructor(readonly hostPort: number) {
    super(`The container engine could not publish host port ${hostPort}: it is already in use.`);
  }
}

/** The engine could not be reached, or answered in a way that is not the app's fault. */
export class RuntimeUnavailableError extends Error {
  override readonly name = "RuntimeUnavailableError";
}

/**
 * The instance's process ended right after it was started (or restarted), so it has no URL. The
 * instance is kept so its logs can be read; remove it when done. This is the app's fault.
 */
export class InstanceExitedError extends Error {
  override readonly name = "InstanceExitedError";
  constructor(
    readonly instanceId: string,
    readonly exitCode: number | null,
  ) {
    super(`The instance's process exited right after starting${exitCode === null ? "" : ` (exit code ${exitCode})`}.`);
  }
}
