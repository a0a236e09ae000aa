/**
 * The egress check of a Docker engine's start-up report (GET /admin/api/runtime): the Worker
 * cannot read the host's firewall, so it checks the rules of scripts/egress-firewall.sh by their
 * effect. A probe container (EGRESS_PROBE_IMAGE, which that script builds) on the build network, a
 * tenant bridge, tries to connect to the host through the network's gateway: no answer at all means
 * the rules are in force; a connection or a refusal means tenant code reaches the host.
 */
import type { DockerEngineClient } from "./docker-client";
import { demultiplexLogs } from "./docker-stream";
import { BUILD_NETWORK } from "./tenant-network";

/** busybox FROM scratch with busybox as its entrypoint, built by scripts/egress-firewall.sh. */
export const EGRESS_PROBE_IMAGE = "control-plane/egress-probe:1";
/** The port tried on the host: any will do, a dropped packet is never answered on any port. */
const PROBE_PORT = "2375";
const HOW_TO = "run scripts/egress-firewall.sh as root on the engine's machine (docs/security.md, Networks)";

export const EGRESS_UNCHECKED = `Tenant egress was not checked: the engine has no probe image ${EGRESS_PROBE_IMAGE}; ${HOW_TO}.`;

/**
 * The report's sentence for what the probe printed ([] when the host gave no answer: blocked).
 * busybox `nc -w 2` says `timed out` when nothing answers within 2 s.
 */
export function egressProblems(output: string, exitCode: number, gateway: string): string[] {
  if (exitCode !== 0 && /timed out/i.test(output)) return [];
  const answer = output.trim().split("\n").at(-1)?.trim() || (exitCode === 0 ? "it connected" : `exit code ${exitCode}`);
  return [`Tenant code reaches this engine's host: a probe container on a tenant network got an answer from ${gateway} (${answer}); ${HOW_TO}.`];
}

/**
 * Runs the probe on the engine and returns the report's sentences (see `egressProblems`);
 * `ensureBuildNetwork` creates the build network when it is missing.
 */
export async function checkEgress(client: DockerEngineClient, ensureBuildNetwork: () => Promise<void>): Promise<string[]> {
  const image = await client.request("GET", `/images/${EGRESS_PROBE_IMAGE.split("/").map(encodeURIComponent).join("/")}/json`, { accept: [404] });
  await image.arrayBuffer();
  if (!image.ok) return [EGRESS_UNCHECKED];
  await ensureBuildNetwork();
  const { body: network } = await client.json<{ IPAM?: { Config?: { Gateway?: string }[] } }>("GET", `/networks/${BUILD_NETWORK}`);
  const gateway = network.IPAM?.Config?.find((c) => c.Gateway)?.Gateway;
  if (!gateway) return [`Tenant egress was not checked: the network ${BUILD_NETWORK} has no gateway address.`];
  const { body: created } = await client.json<{ Id: string }>("POST", "/containers/create", {
    json: {
      Image: EGRESS_PROBE_IMAGE,
      Cmd: ["nc", "-w", "2", gateway, PROBE_PORT],
      Labels: { "control-plane.probe": "egress" },
      HostConfig: { NetworkMode: BUILD_NETWORK, Memory: 16 * 1024 * 1024, PidsLimit: 8, CapDrop: ["ALL"] },
    },
  });
  const id = encodeURIComponent(created.Id);
  try {
    await (await client.request("POST", `/containers/${id}/start`)).arrayBuffer();
    const { body: waited } = await client.json<{ StatusCode?: number }>("POST", `/containers/${id}/wait`, { untimed: true });
    const logs = await client.request("GET", `/containers/${id}/logs`, { query: { stdout: "1", stderr: "1" } });
    return egressProblems(demultiplexLogs(new Uint8Array(await logs.arrayBuffer())), waited.StatusCode ?? -1, gateway);
  } finally {
    await (await client.request("DELETE", `/containers/${id}`, { query: { force: "1" }, accept: [404] })).arrayBuffer();
  }
}
