import { appNetworkName } from "../runtime";
import { type ContainerRuntime, type Instance, InstanceExitedError, RuntimeUnavailableError } from "../runtime/types";
import { type PlanId, planLimits } from "./plans";
import { probeInstance } from "./probe";

/** The label every instance of an app carries, with the app id: how the engine's own list finds them. */
export const APP_ID_LABEL = "control-plane.app_id";

/** The image name of an app; each deploy tags it with the deploy id. */
export function appImageRepository(appId: string): string {
  return `control-plane/app-${appId}`;
}

/** What a new instance of an app needs: the image, its port, its plan, its variables. */
export interface LaunchSpec {
  appId: string;
  image: string;
  port: number;
  /** Where the port came from, for the failure sentence ("first EXPOSE line, 3000"). */
  portReason: string;
  plan: PlanId;
  /** The app's environment variables (SPEC.md: no `PORT` is set). */
  env: Record<string, string>;
  /** The deploy that built the image, for the instance's labels. */
  deployId: string;
}

export type LaunchOutcome = { ok: true; instance: Instance } | { ok: false; kind: "probe_failed" | "start_failed"; message: string };

/** SPEC.md, failed-deploy messages: "the container started but nothing answered on the probed port". */
export function probeFailedMessage(port: number, portReason: string, timeoutSeconds: number): string {
  return `The container started but nothing answered on port ${port} (${portReason}) within ${timeoutSeconds} s. The process must listen on 0.0.0.0:${port}, not 127.0.0.1.`;
}

/**
 * Starts a new instance and waits until its port answers. An instance that does not answer is
 * removed again, so a failed launch leaves nothing running and whatever served before still does.
 */
export async function launchInstance(
  runtime: ContainerRuntime,
  spec: LaunchSpec,
  options: { probeTimeoutSeconds: number; log?: (text: string) => Promise<void> },
): Promise<LaunchOutcome> {
  const log = options.log ?? (async () => undefined);
  let instance: Instance;
  try {
    instance = await runtime.start({
      image: spec.image,
      name: `cp-${spec.appId.slice(0, 8)}-${crypto.randomUUID().slice(0, 8)}`,
      labels: { [APP_ID_LABEL]: spec.appId, "control-plane.deploy_id": spec.deployId },
      env: spec.env,
      port: spec.port,
      limits: planLimits(spec.plan),
      network: appNetworkName(spec.appId),
    });
  } catch (err) {
    if (err instanceof RuntimeUnavailableError) throw err;
    if (err instanceof InstanceExitedError) {
      const output = await runtime.logs(err.instanceId, { tail: 100 }).catch(() => "");
      if (output) await log(`Instance output:\n${output.replace(/\n$/, "")}`);
      await runtime.remove(err.instanceId).catch(() => undefined);
    }
    const message = `The container could not be started: ${err instanceof Error ? err.message : String(err)}`;
    await log(message);
    return { ok: false, kind: "start_failed", message };
  }
  await log(`Started instance ${instance.id.slice(0, 12)}; probing port ${spec.port} (${spec.portReason}) for up to ${options.probeTimeoutSeconds} s`);
  const probe = await probeInstance(instance.url, { timeoutMs: options.probeTimeoutSeconds * 1000 });
  if (probe.answered) {
    await log(`Port ${spec.port} answered HTTP ${probe.status}`);
    return { ok: true, instance };
  }
  const output = await runtime.logs(instance.id, { tail: 100 }).catch(() => "");
  if (output) await log(`Instance output:\n${output}`);
  await runtime.remove(instance.id).catch(() => undefined);
  const message = probeFailedMessage(spec.port, spec.portReason, options.probeTimeoutSeconds);
  await log(message);
  return { ok: false, kind: "probe_failed", message };
}
