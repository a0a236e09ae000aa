import { and, eq, inArray } from "drizzle-orm";
import { getConfig } from "../config";
import { database } from "../db/client";
import { deploys } from "../db/schema";
import { describeError, log } from "../http/log";
import { runtimeFor } from "../runtime";
import { type ContainerRuntime, type Instance, RuntimeUnavailableError } from "../runtime/types";
import { buildContextFromArchive } from "../source/context";
import { archiveUrl } from "../source/forge";
import { DRAIN_MS, appController } from "./app-controller";
import { missingBuildFileMessage, resolveBuildFile } from "./contract/build-file";
import { probedPort } from "./contract/expose";
import { DeployLog, deployLogKey } from "./deploy-log";
import { appImageRepository, launchInstance } from "./launch";
import type { DeployJobMessage } from "./messages";
import type { PlanId } from "./plans";
import { type AppRow, type DeployRow, getApp } from "./store";
import { launchEnv } from "../envvars/store";

/** `max_retries` of the deploy-jobs consumer in wrangler.toml. */
export const DEPLOY_QUEUE_MAX_RETRIES = 2;
export const DEPLOY_MAX_ATTEMPTS = DEPLOY_QUEUE_MAX_RETRIES + 1;
export const DEPLOY_QUEUE = "deploy-jobs";
export const DEPLOY_DLQ = "deploy-jobs-dlq";
/** How long the tar reader may take to report on the build file after the engine has read the context. */
const INSPECTION_GRACE_MS = 10_000;

export interface Failure {
  kind: "no_engine" | "engine_unreachable" | "invalid_settings" | "source_unavailable" | "build_file_missing" | "build_failed" | "start_failed" | "probe_failed" | "interrupted";
  message: string;
}

export interface DeployJobOptions {
  now: () => number;
  fetch?: typeof fetch;
}

/** The queue consumer for deploy-jobs and its dead-letter queue. */
export async function handleDeployBatch(batch: MessageBatch<unknown>, env: Env, options: DeployJobOptions): Promise<void> {
  for (const message of batch.messages) {
    const body = message.body as Partial<DeployJobMessage> | null;
    if (typeof body?.appId !== "string" || typeof body.deployId !== "string") {
      log("error", "deploy job message has the wrong shape; dropped", { queue: batch.queue, message_id: message.id });
      message.ack();
    } else if (batch.queue === DEPLOY_DLQ) {
      await appController(env, body.appId).failDeploy({
        deployId: body.deployId,
        failure: { kind: "interrupted", message: "The deploy was interrupted and could not be finished. Deploy again." },
        now: options.now(),
      });
      message.ack();
    } else {
      await runDeployJob(env, message as Message<DeployJobMessage>, options);
    }
  }
}

/**
 * One try of one deploy: fetch the branch, build, start, probe, switch traffic, retire the old
 * instance. Every step goes to the deploy's log. A failure the app owns (no build file, a failing
 * build, nothing answering) ends the deploy with its interpretation; an unexpected error is tried
 * again by the queue, and after the last try the deploy is failed.
 */
export async function runDeployJob(env: Env, message: Message<DeployJobMessage>, options: DeployJobOptions): Promise<void> {
  const { appId, deployId } = message.body;
  const fields = { app_id: appId, deploy_id: deployId, attempt: message.attempts };
  const db = database(env);
  const deploy = await db.select().from(deploys).where(eq(deploys.id, deployId)).get();
  const app = await getApp(env, appId);
  if (!deploy || !app || (deploy.status !== "building" && deploy.status !== "starting")) {
    log("info", "deploy job has nothing to do", fields);
    message.ack();
    return;
  }
  await db.update(deploys).set({ status: "building", attempts: message.attempts }).where(eq(deploys.id, deployId));
  const deployLog = new DeployLog(env.LOGS, deployLogKey(appId, deployId), options.now);
  const controller = appController(env, appId);
  const fail = async (failure: Failure) => {
    await deployLog.step(`Deploy failed: ${failure.message}`);
    await deployLog.flush();
    await controller.failDeploy({ deployId, failure, now: options.now() });
    log("info", "deploy failed", { ...fields, kind: failure.kind });
  };
  try {
    if (message.attempts > 1) await deployLog.step(`Try ${message.attempts} of ${DEPLOY_MAX_ATTEMPTS}`);
    const runtime = runtimeFor(env);
    if (!runtime) {
      await fail({ kind: "no_engine", message: "No container engine is configured. Set RUNTIME_URL to the Docker Engine API address; npm start does this when Docker runs on the machine." });
      message.ack();
      return;
    }
    const outcome = await buildAndLaunch(env, runtime, app, deploy, deployLog, options);
    if (!outcome.ok) {
      await fail(outcome.failure);
      message.ack();
      return;
    }
    const switched = await controller.completeDeploy({ deployId, instance: outcome.instance, envVersion: outcome.envVersion, now: options.now() });
    if (!switched) {
      // Nothing will serve from this deploy (it was failed meanwhile, or the app deleted): its
      // instance and image go, or they would outlive the records that could find them.
      await deployLog.step("The deploy was no longer current; its instance and image were removed");
      await runtime.remove(outcome.instance.id).catch(() => undefined);
      await runtime.removeImage(outcome.image).catch(() => undefined);
    } else {
      await deployLog.step(`Live: traffic switched to instance ${outcome.instance.id.slice(0, 12)}`);
      await deployLog.flush();
      await retire(runtime, switched.previous, outcome.image, deployLog);
    }
    await deployLog.flush();
    log("info", "deploy live", fields);
    message.ack();
  } catch (err) {
    if (err instanceof RuntimeUnavailableError) {
      await fail({ kind: "engine_unreachable", message: `The container engine could not be reached: ${err.message}` });
      message.ack();
    } else if (message.attempts >= DEPLOY_MAX_ATTEMPTS) {
      log("error", "deploy failed for good", { ...fields, ...describeError(err) });
      await fail({ kind: "interrupted", message: "The deploy failed on our side and could not be finished. Deploy again." });
      message.ack();
    } else {
      log("warn", "deploy try failed; retrying", { ...fields, ...describeError(err) });
      await deployLog.step("The deploy hit an error on our side; trying again");
      await deployLog.flush().catch(() => undefined);
      message.retry({ delaySeconds: 5 });
    }
  }
}

type BuildOutcome = { ok: true; instance: Instance; image: string; envVersion: number } | { ok: false; failure: Failure };

async function buildAndLaunch(env: Env, runtime: ContainerRuntime, app: AppRow, deploy: DeployRow, deployLog: DeployLog, options: DeployJobOptions): Promise<BuildOutcome> {
  const config = getConfig(env);
  const buildFile = resolveBuildFile(app.rootDirectory, app.dockerfilePath);
  if (!buildFile.ok) return { ok: false, failure: { kind: "invalid_settings", message: buildFile.message } };

  const url = archiveUrl(app.repository, app.branch);
  await deployLog.step(`Fetching branch ${app.branch} of ${app.repository}`);
  const res = await (options.fetch ?? fetch)(url, { redirect: "follow" }).catch((err: unknown) => err as Error);
  if (res instanceof Error || !res.ok || !res.body) {
    const why = res instanceof Error ? res.message : `HTTP ${res.status}`;
    return { ok: false, failure: { kind: "source_unavailable", message: `The repository could not be fetched (${why} from ${url}). Check the repository address and that branch ${app.branch} exists.` } };
  }

  const { context, inspection } = buildContextFromArchive(res.body, { rootDirectory: app.rootDirectory, dockerfilePath: buildFile.path });
  const tag = `${appImageRepository(app.id)}:${deploy.id}`;
  await deployLog.step(`Building ${buildFile.path} (context: ${app.rootDirectory || "repository root"})`);
  const build = await runtime.build({ context, dockerfile: buildFile.inContext, tag, onOutput: (text) => deployLog.append(text.replace(/\n$/, "")) });
  const found = await Promise.race([
    inspection.catch((err: Error) => err),
    new Promise<null>((r) => setTimeout(() => r(null), INSPECTION_GRACE_MS)),
  ]);
  if (found instanceof Error) {
    if (build.ok) await runtime.removeImage(build.image).catch(() => undefined);
    return { ok: false, failure: { kind: "source_unavailable", message: found.message } };
  }
  if (found && found.dockerfile === null) {
    if (build.ok) await runtime.removeImage(build.image).catch(() => undefined);
    return { ok: false, failure: { kind: "build_file_missing", message: missingBuildFileMessage(buildFile.path, found.buildFiles) } };
  }
  if (!build.ok) {
    const step = build.failedStep ? ` at ${build.failedStep}` : "";
    return { ok: false, failure: { kind: "build_failed", message: `The build failed${step}: ${build.error}` } };
  }

  const port = probedPort(found?.dockerfile ?? null);
  await deployLog.step(`Image built; port ${port.port} (${port.reason})`);
  // Only a deploy still in flight moves on: one failed meanwhile (dead-letter queue, deadline) stays failed.
  const current = await database(env)
    .update(deploys)
    .set({ status: "starting", image: build.image, port: port.port, portSource: port.source, portReason: port.reason })
    .where(and(eq(deploys.id, deploy.id), inArray(deploys.status, ["building", "starting"])))
    .returning({ id: deploys.id });
  if (current.length === 0) {
    await runtime.removeImage(build.image).catch(() => undefined);
    return { ok: false, failure: { kind: "interrupted", message: "The deploy was ended before it finished." } };
  }
  const variables = await launchEnv(env, app.id);
  const launched = await launchInstance(
    runtime,
    { appId: app.id, image: build.image, port: port.port, portReason: port.reason, plan: app.plan as PlanId, env: variables.env, deployId: deploy.id },
    { probeTimeoutSeconds: config.PROBE_TIMEOUT_SECONDS, log: (text) => deployLog.append(text) },
  );
  if (!launched.ok) {
    await runtime.removeImage(build.image).catch(() => undefined);
    return { ok: false, failure: { kind: launched.kind, message: launched.message } };
  }
  const output = await runtime.logs(launched.instance.id, { tail: 50 }).catch(() => "");
  if (output) await deployLog.append(`Instance output:\n${output.replace(/\n$/, "")}`);
  return { ok: true, instance: launched.instance, image: build.image, envVersion: variables.version };
}

/** The instance that served before: left to finish what it was sent, then removed with its image. */
async function retire(runtime: ContainerRuntime, previous: { instanceId: string | null; image: string | null }, newImage: string, deployLog: DeployLog): Promise<void> {
  if (!previous.instanceId) return;
  await new Promise((r) => setTimeout(r, DRAIN_MS));
  await runtime.remove(previous.instanceId).catch((err: unknown) => log("warn", "old instance not removed", describeError(err)));
  if (previous.image && previous.image !== newImage) await runtime.removeImage(previous.image).catch(() => undefined);
  await deployLog.step(`Previous instance ${previous.instanceId.slice(0, 12)} stopped and removed`);
}
