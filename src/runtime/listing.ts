/**
 * The engine's own lists of what the control plane made there (instances by label, networks and
 * images by name prefix), for the reconciler (src/apps/reconcile.ts): one Docker engine's
 * containers, or a swarm manager's services.
 */
import type { DockerEngineClient } from "./docker-client";
import type { ListedInstance, ListedObject } from "./types";

const labelFilter = (label: { key: string; value?: string }) => JSON.stringify({ label: [label.value === undefined ? label.key : `${label.key}=${label.value}`] });

/** `GET /containers/json?all=1`: containers carrying the label, stopped ones too. */
export async function listContainers(client: DockerEngineClient, label: { key: string; value?: string }): Promise<ListedInstance[]> {
  const { body } = await client.json<{ Id: string; Names?: string[]; Labels?: Record<string, string> | null; Created?: number }[]>("GET", "/containers/json", {
    query: { all: "1", filters: labelFilter(label) },
  });
  return body.map((c) => ({ id: c.Id, name: (c.Names?.[0] ?? "").replace(/^\//, ""), labels: c.Labels ?? {}, createdAt: secondsOf(c.Created) }));
}

/** `GET /services`: a swarm's services carrying the label (each is one instance). */
export async function listServices(client: DockerEngineClient, label: { key: string; value?: string }): Promise<ListedInstance[]> {
  const { body } = await client.json<{ ID: string; CreatedAt?: string; Spec?: { Name?: string; Labels?: Record<string, string> } }[]>("GET", "/services", {
    query: { filters: labelFilter(label) },
  });
  return body.map((s) => ({ id: s.ID, name: s.Spec?.Name ?? "", labels: s.Spec?.Labels ?? {}, createdAt: timeOf(s.CreatedAt) }));
}

/** `GET /networks`: those whose name starts with `prefix` (the engine's name filter matches substrings). */
export async function listNetworks(client: DockerEngineClient, prefix: string): Promise<ListedObject[]> {
  const { body } = await client.json<{ Name: string; Created?: string }[]>("GET", "/networks", { query: { filters: JSON.stringify({ name: [prefix] }) } });
  return body.filter((n) => n.Name.startsWith(prefix)).map((n) => ({ name: n.Name, createdAt: timeOf(n.Created) }));
}

/** `GET /images/json`: every tag whose repository starts with `prefix`. */
export async function listImages(client: DockerEngineClient, prefix: string): Promise<ListedObject[]> {
  const { body } = await client.json<{ RepoTags?: string[] | null; Created?: number }[]>("GET", "/images/json");
  return body.flatMap((i) => (i.RepoTags ?? []).filter((tag) => tag.startsWith(prefix)).map((tag) => ({ name: tag, createdAt: secondsOf(i.Created) })));
}

/**
 * An RFC 3339 time as ms since the epoch. Absent or unreadable: now, so the object never looks old
 * enough to be removed for its age.
 */
function timeOf(text: string | undefined): number {
  const at = text ? Date.parse(text) : NaN;
  return Number.isFinite(at) && at > 0 ? at : Date.now();
}

/** The engine's Unix seconds as ms since the epoch (absent: now, as above). */
function secondsOf(seconds: number | undefined): number {
  return typeof seconds === "number" && seconds > 0 ? seconds * 1000 : Date.now();
}
