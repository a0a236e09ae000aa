import { getConfig } from "../config";
import { buildCacheScope } from "../source/cache-scope";
import { describeError, log } from "../http/log";
import { runtimeFor } from "../runtime";
import { type ContainerRuntime, RuntimeUnavailableError } from "../runtime/types";
import { fetchAndBuild } from "../source/build-step";
import { fetchCommit, pickCommit } from "../source/commit";
import { appController } from "./app-controller";
import { missingBuildFileMessage, resolveBuildFile } from "../source/build-file";
import { buildSourceRefusal } from "./contract/build-sources";
import { type ProbedPort, probedPort } from "./contract/expose";
import { DeployLog, deployLogPrefix } from "./deploy-log";
import { appLogs } from "../logs/app-logs";
import { secretsToMask } from "../logs/mask";
import { RUNNER_BEAT_MS } from "./heartbeat";
import { APP_ID_LABEL, DEPLOY_ID_LABEL, appImageRepository } from "./launch";
import { relaunch } from "./relaunch";
import { BUILT_STOPPED, type DeployJobMessage } from "./messages";
import { beatDeployRunner, claimDeployBuild, deployBuildAliveAt, refreshDeployBuild, updateRunningDeploy } from "./deploy-store";
import { type AppRow, type DeployRow, deployById, getApp } from "./store";
import { launchEnv } from "../envvars/store";
import { SOURCE_TOKEN_UNREADABLE, openSourceToken } from "../source/token";

/** `max_retries` of the deploy-jobs consumer in wrangler.toml. */
export const DEPLOY_QUEUE_MAX_RETRIES = 2;
export const DEPLOY_MAX_ATTEMPTS = DEPLOY_QUEUE_MAX_RETRIES + 1;
export const DEPLOY_QUEUE = "deploy-jobs";
export const DEPLOY_DLQ = "deploy-jobs-dlq";

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
 * One try of one deploy, with its heartbeat (`runner_alive_at`, every RUNNER_BEAT_MS) written for
 * as long as it runs: the app's controller hands the job to a new runner, or fails it, once the
 * heartbeat has been silent for a minute (src/apps/heartbeat.ts).
 */
export async function runDeployJob(env: Env, message: Message<DeployJobMessage>, options: DeployJobOptions): Promise<void> {
  const beat = () => beatDeployRunner(env, message.body.deployId, options.now()).catch((err: unknown) => log("warn", "deploy heartbeat not written", { deploy_id: message.body.deployId, ...describeError(err) }));
  await beat();
  const heartbeat = setInterval(() => void beat(), RUNNER_BEAT_MS);
  try {
    await runDeployTry(env, message, options);
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * Fetch the branch, build, start, probe, switch traffic (the old instance's retire row lands with
 * the switch). Every step goes to the deploy's log. A failure the app owns (no build file, a
 * failing build, nothing answering) ends the deploy with its interpretation; an unexpected error
 * is tried again by the queue, and after the last try the deploy is failed.
 */
async function runDeployTry(env: Env, message: Message<DeployJobMessage>, options: DeployJobOptions): Promise<void> {
  const { appId, deployId } = message.body;
  const fields = { app_id: appId, deploy_id: deployId, attempt: message.attempts };
  const deploy = await deployById(env, deployId);
  const app = await getApp(env, appId);
  if (!deploy || !app || (deploy.status !== "building" && deploy.status !== "starting")) {
    log("info", "deploy job has nothing to do", fields);
    message.ack();
    return;
  }
  await updateRunningDeploy(env, deployId, { status: "building", attempts: message.attempts });
  const deployLog = new DeployLog(env.LOGS, deployLogPrefix(appId, deployId), options.now);
  deployLog.mask(secretsToMask(Object.values((await launchEnv(env, appId)).env)));
  const controller = appController(env, appId);
  const fail = async (failure: Failure) => {
    await deployLog.step(`Deploy failed: ${failure.message}`);
    await deployLog.flush();
    await controller.failDeploy({ deployId, failure, now: options.now() });
    log("info", "deploy failed", { ...fields, kind: failure.kind });
  };
  try {
    if (message.attempts > 1) await deployLog.step(`Try ${message.attempts} of ${DEPLOY_MAX_ATTEMPTS}`);
    const failure = await buildAndRun(env, app, deploy, deployLog, options);
    if (failure) await fail(failure);
    else {
      await deployLog.flush();
      // The app's output is kept from now on (src/logs/app-logs.ts).
      await appLogs(env, appId).watch(appId).catch(() => undefined);
      log("info", "deploy live", fields);
    }
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

type BuildOutcome = { ok: true; image: string; port: ProbedPort } | { ok: false; failure: Failure };

/** Build, then run what was built; the failure to report, or undefined once live (or no longer current). */
async function buildAndRun(env: Env, app: AppRow, deploy: DeployRow, deployLog: DeployLog, options: DeployJobOptions): Promise<Failure | undefined> {
  const runtime = runtimeFor(env);
  if (!runtime) return { kind: "no_engine", message: "No container engine is configured. Set RUNTIME_URL to the Docker Engine API address; npm start does this when Docker runs on the machine." };
  const built = await buildImage(env, runtime, app, deploy, deployLog, options);
  if (!built.ok) return built.failure;
  return runBuilt(env, runtime, app.id, deploy.id, built, deployLog, options);
}

/** An instance of `deployId` that no record serves: the deploy is still in flight and the app runs another. */
async function strayOfDeploy(env: Env, appId: string, deployId: string, instanceId: string): Promise<boolean> {
  const [app, deploy] = await Promise.all([getApp(env, appId), deployById(env, deployId)]);
  return !!app && !!deploy && (deploy.status === "building" || deploy.status === "starting") && app.instanceId !== instanceId && deploy.instanceId !== instanceId;
}

/**
 * The built image goes live. A stopped app stays stopped (billing: nothing runs unpaid; Start runs
 * this version); otherwise the one launch-and-switch starts it, its switch a compare-and-set on the
 * instance that serves now. A failure to report, or undefined.
 */
async function runBuilt(env: Env, runtime: ContainerRuntime, appId: string, deployId: string, built: Extract<BuildOutcome, { ok: true }>, deployLog: DeployLog, options: DeployJobOptions): Promise<Failure | undefined> {
  const controller = appController(env, appId);
  const app = await getApp(env, appId);
  if (app?.status === "stopped") {
    const done = await controller.completeDeploy({ deployId, instance: null, replaces: app.instanceId, envVersion: app.envAppliedVersion, now: options.now() });
    if (done.switched) return void (await deployLog.step(BUILT_STOPPED));
  } else if (app) {
    // An earlier try of this deploy that died between its launch and its switch left its instance.
    // Each is looked at against the records as they are now: another try still alive may have
    // switched to its instance since this one read the app, and that instance serves.
    for (const id of await runtime.instances({ [APP_ID_LABEL]: appId, [DEPLOY_ID_LABEL]: deployId })) if (await strayOfDeploy(env, appId, deployId, id)) await runtime.remove(id);
    const outcome = await relaunch(env, runtime, app, {
      image: { image: built.image, port: built.port.port, portReason: built.port.reason, deployId },
      log: (text) => deployLog.append(text),
      // The log is whole up to "Live:" when the deploy shows live, not only after the drain.
      afterSwitch: () => deployLog.flush(),
      switchTo: async (instance, { envVersion }) => {
        const output = await runtime.logs(instance.id, { tail: 50 }).catch(() => "");
        if (output) await deployLog.append(`Instance output:\n${output.replace(/\n$/, "")}`);
        // The controller writes the replaced instance's retire row with the deploy's switch.
        return controller.completeDeploy({ deployId, instance, replaces: app.instanceId, envVersion, now: options.now() });
      },
    });
    if (outcome.ok) return undefined;
    if (outcome.kind !== "not_switched") {
      await runtime.removeImage(built.image).catch(() => undefined);
      return { kind: outcome.kind, message: outcome.message };
    }
  }
  // Nothing will serve from this deploy (it was failed meanwhile, or the app deleted): its image
  // goes, or it would outlive the records that could find it.
  await deployLog.step("The deploy was no longer current; its image was removed");
  await runtime.removeImage(built.image).catch(() => undefined);
  return undefined;
}

async function buildImage(env: Env, runtime: ContainerRuntime, app: AppRow, deploy: DeployRow, deployLog: DeployLog, options: DeployJobOptions): Promise<BuildOutcome> {
  const config = getConfig(env);
  const buildFile = resolveBuildFile(app.rootDirectory, app.dockerfilePath);
  if (!buildFile.ok) return { ok: false, failure: { kind: "invalid_settings", message: buildFile.message } };
  let token: string | null = null;
  if (app.sourceToken) {
    try {
      token = await openSourceToken(config.ENV_ENCRYPTION_KEY, app.id, app.sourceToken);
    } catch {
      return { ok: false, failure: { kind: "invalid_settings", message: SOURCE_TOKEN_UNREADABLE } };
    }
  }

  // The forge's API is asked for the branch head while the archive is fetched and built.
  const fromApi = fetchCommit(app.repository, app.branch, { policy: { allowLocal: config.ALLOW_LOCAL_SOURCES }, fetch: options.fetch, token });
  const built = await fetchAndBuild({
    runtime,
    repository: app.repository,
    branch: app.branch,
    rootDirectory: app.rootDirectory,
    buildFile,
    tag: `${appImageRepository(app.id)}:${deploy.id}`,
    policy: { allowLocal: config.ALLOW_LOCAL_SOURCES },
    token,
    caps: { maxBytes: config.SOURCE_MAX_BYTES, maxEntries: config.SOURCE_MAX_ENTRIES },
    sourceTimeoutSeconds: config.SOURCE_TIMEOUT_SECONDS,
    buildTimeoutSeconds: config.BUILD_TIMEOUT_SECONDS,
    buildLimits: { memoryBytes: config.BUILD_MEMORY_MB * 1024 * 1024, cpus: config.BUILD_CPUS },
    buildDiskBytes: config.BUILD_DISK_MB * 1024 * 1024,
    checkBuildFile: (text) => buildSourceRefusal(text, { registry: config.REGISTRY }),
    cacheScope: await buildCacheScope(config.ENV_ENCRYPTION_KEY, app.id),
    mark: {
      claim: () => claimDeployBuild(env, deploy.id, options.now()),
      refresh: () => refreshDeployBuild(env, deploy.id, options.now()),
      aliveAt: () => deployBuildAliveAt(env, deploy.id),
    },
    now: options.now,
    fetch: options.fetch,
    step: (text) => deployLog.step(text),
    append: (text) => deployLog.append(text),
  });
  if (!built.ok) {
    const message = built.kind === "build_file_missing" ? missingBuildFileMessage(buildFile.path, built.buildFiles ?? []) : built.message;
    return { ok: false, failure: { kind: built.kind, message } };
  }
  return recordBuilt(env, runtime, deploy, { image: built.image, dockerfile: built.dockerfile, commitSha: built.commitSha ?? null, fromApi, plan: app.plan }, deployLog, options);
}

/** The image is built: its port, commit and digest go on the deploy, which moves on to `starting` if it is still in flight. */
async function recordBuilt(
  env: Env,
  runtime: ContainerRuntime,
  deploy: DeployRow,
  build: { image: string; dockerfile: Parameters<typeof probedPort>[0]; commitSha: string | null; fromApi: ReturnType<typeof fetchCommit>; plan: string },
  deployLog: DeployLog,
  options: DeployJobOptions,
): Promise<BuildOutcome> {
  const port = probedPort(build.dockerfile);
  await deployLog.step(`Image built; port ${port.port} (${port.reason})`);
  const commit = pickCommit(build.commitSha, await build.fromApi);
  if (commit) await deployLog.step(`Commit ${commit.sha.slice(0, 12)}${commit.message ? `: ${commit.message.split("\n")[0]}` : ""}`);
  const digest = await runtime.imageDigest(build.image).catch(() => null);
  const recorded = { commitSha: commit?.sha ?? null, commitMessage: commit?.message ?? null, imageDigest: digest, plan: build.plan };
  // Only a deploy still in flight moves on: one failed meanwhile (dead-letter queue, deadline) stays failed.
  const current = await updateRunningDeploy(env, deploy.id, { status: "starting", image: build.image, port: port.port, portSource: port.source, portReason: port.reason, ...recorded });
  if (!current) {
    await runtime.removeImage(build.image).catch(() => undefined);
    return { ok: false, failure: { kind: "interrupted", message: "The deploy was ended before it finished." } };
  }
  return { ok: true, image: build.image, port };
}
