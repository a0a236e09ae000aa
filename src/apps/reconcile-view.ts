/**
 * The two sides the reconciler compares (src/apps/reconcile-plan.ts), read for the whole engine or
 * for one app: what the engine holds, and what the records say should be there.
 */
import { getConfig } from "../config";
import { database } from "../db/client";
import { appNetworkName } from "../runtime";
import { engineKey, portRows } from "../runtime/ports";
import type { ContainerRuntime } from "../runtime/types";
import { wentLive } from "./history";
import { APP_ID_LABEL, appImageRepository } from "./launch";
import type { EngineView, Records } from "./reconcile-plan";
import { allRetireRows, retireRowsOf } from "./retire-ledger";
import { DEPLOY_RUNNING, reconcileRecords } from "./store";

/** The grace period (RECONCILE_GRACE_SECONDS) in ms. */
export function reconcileGraceMs(env: Env): number {
  return getConfig(env).RECONCILE_GRACE_SECONDS * 1000;
}

/**
 * What the engine holds for every app, or for `appId`: instances by their app label, the apps'
 * networks and images by name, and, on one Docker engine, the port rows.
 */
export async function engineView(env: Env, runtime: ContainerRuntime, appId?: string): Promise<EngineView> {
  const config = getConfig(env);
  const networkPrefix = appNetworkName(appId ?? "");
  const imagePrefix = appId === undefined ? appImageRepository("") : `${appImageRepository(appId)}:`;
  const [instances, networks, images, ports] = await Promise.all([
    runtime.listInstances({ key: APP_ID_LABEL, ...(appId === undefined ? {} : { value: appId }) }),
    runtime.listNetworks(networkPrefix),
    runtime.listImages(imagePrefix),
    config.RUNTIME_KIND === "swarm" ? null : portRows(database(env), engineKey(config.RUNTIME_URL), appId),
  ]);
  const repository = appImageRepository("");
  return {
    instances: instances.map((i) => ({ id: i.id, name: i.name, appId: i.labels[APP_ID_LABEL] ?? "", createdAt: i.createdAt })),
    networks: networks
      .filter((n) => appId === undefined || n.name === networkPrefix)
      .map((n) => ({ id: n.name, appId: n.name.slice(appNetworkName("").length), createdAt: n.createdAt })),
    images: images.map((i) => ({ id: i.name, appId: i.name.slice(repository.length, i.name.lastIndexOf(":")), createdAt: i.createdAt })),
    ports: ports?.map((p) => ({ port: p.port, appId: p.appId, instanceId: p.instanceId, instanceName: p.instanceName, allocatedAt: p.allocatedAt })) ?? null,
  };
}

/**
 * What the records say, for every app or for `appId`: each app's status, instance and image, the
 * images its deploys still need (live, kept for rollback, or being built or started), and the
 * instances the retire ledger still holds.
 */
export async function recordsView(env: Env, appId?: string): Promise<Records> {
  const [{ apps, deploys }, retiring] = await Promise.all([reconcileRecords(env, appId), appId === undefined ? allRetireRows(env) : retireRowsOf(env, appId)]);
  const kept = new Map<string, string[]>();
  for (const d of deploys) {
    if (d.image === null || !((wentLive(d.status) && !d.imageRemoved) || DEPLOY_RUNNING.includes(d.status))) continue;
    kept.set(d.appId, [...(kept.get(d.appId) ?? []), d.image]);
  }
  return {
    apps: apps.map((a) => ({ id: a.id, status: a.status, instanceId: a.instanceId, image: a.image, keptImages: kept.get(a.id) ?? [] })),
    retiring: retiring.map((r) => ({ appId: r.appId, instanceId: r.instanceId, image: r.image })),
  };
}
