/**
 * Each app on a swarm has its own overlay network: on the two-node swarm, a probe task on another
 * app's network cannot reach an app's task on any port (no answer and no refusal: no packet gets
 * there), neither from the other node nor from the task's own node (through the nodes' gateway
 * bridge either), nor its node's own address, while a probe on the app's own network, on the other
 * node, reaches it. Delete's removeNetwork removes the overlay.
 *
 * The overlays here are unencrypted (`encryptNetworks: false`): this machine's kernel has no ESP
 * with AES-GCM (dockerd logs "Failed Adding ... SA: function not implemented"), so an encrypted
 * overlay carries nothing between nodes and the same-app control would fail for that reason alone.
 * The encrypted option itself is asserted in test/unit/runtime-swarm-rules.test.ts.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SwarmRuntime } from "../../src/runtime/swarm";
import * as img from "../runtime/images";
import { tarStream } from "../runtime/tar";
import { type TestSwarm, startSwarm } from "./swarm-env";

const run = promisify(execFile);
const stamp = Date.now().toString(36);
const tag = `cp-net-web-${stamp}:1`;
const netA = `control-plane-app-neta${stamp}`;
const netB = `control-plane-app-netb${stamp}`;
/** The web image's port, and one where nothing listens (a reachable task refuses it at once). */
const PORTS = [img.PORT, 9];

let s: TestSwarm;
let onWorker: SwarmRuntime;
let onManager: SwarmRuntime;
let image = "";
const docker = (sock: string, ...args: string[]) => run("docker", ["-H", `unix://${sock}`, ...args], { timeout: 60_000 }).then((r) => r.stdout.trim());

beforeAll(async () => {
  s = await startSwarm({ name: "cpan", nodes: 2, subnet: "10.77.6" });
  const options = { url: s.managerUrl, registry: s.registry, stopGraceSeconds: 1, encryptNetworks: false };
  onWorker = new SwarmRuntime({ ...options, constraints: ["node.role==worker"] });
  onManager = new SwarmRuntime({ ...options, constraints: ["node.role==manager"] });
  const busybox = await readFile("/bin/busybox");
  expect(await onWorker.build({ context: tarStream(img.conformanceContext(busybox)), dockerfile: img.DOCKERFILES.web, tag })).toEqual({ ok: true, image: tag });
  image = `${s.registry}/${tag}`;
});

afterAll(async () => {
  await s?.down();
});

const app = (name: string, network: string) => ({
  image: tag,
  name: `${name}-${stamp}`,
  labels: { "cp-net": stamp },
  env: {},
  port: img.PORT,
  limits: { memoryBytes: 64 * 1024 * 1024, cpus: 0.25 },
  network,
});

/**
 * Runs a one-shot probe task on `network`, on the node with `role`, that connects to each address
 * and port; resolves with one line per try: `<address>:<port> open`, or busybox nc's complaint
 * (`timed out`, `Connection refused`, `No route to host`).
 */
async function probe(network: string, role: "manager" | "worker", addresses: string[]): Promise<string> {
  const tries = addresses.flatMap((a) => PORTS.map((p) => `if r=$(/bin/busybox nc -w 3 ${a} ${p} </dev/null 2>&1); then echo "${a}:${p} open"; else echo "${a}:${p} $r"; fi`));
  const name = `cp-net-probe-${role}-${network.slice(-5)}-${Date.now().toString(36)}`;
  await docker(s.managerSock, "service", "create", "-d", "--name", name, "--network", network, "--constraint", `node.role==${role}`, "--restart-condition", "none", image, "/bin/busybox", "sh", "-c", `${tries.join("; ")}; echo probe-done`);
  try {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const out = await docker(s.managerSock, "service", "logs", "--raw", name).catch(() => "");
      if (out.includes("probe-done")) return out;
      if (Date.now() > deadline) throw new Error(`the probe ${name} did not finish: ${out}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  } finally {
    await docker(s.managerSock, "service", "rm", name).catch(() => undefined);
  }
}

/** The overlay address of the one task of service `id` on `network`. */
async function overlayAddress(id: string, network: string): Promise<string> {
  const tasks = JSON.parse(await docker(s.managerSock, "inspect", ...(await docker(s.managerSock, "service", "ps", "-q", "--filter", "desired-state=running", id)).split("\n"))) as {
    NetworksAttachments?: { Network: { Spec: { Name: string } }; Addresses: string[] }[];
  }[];
  const address = tasks.flatMap((t) => t.NetworksAttachments ?? []).find((n) => n.Network.Spec.Name === network)?.Addresses[0];
  expect(address).toBeTruthy();
  return address!.split("/")[0]!;
}

describe("Docker Swarm, two nodes: each app on its own overlay network", () => {
  it("another app's probe reaches no port of the task, from either node; the app's own probe on the other node does; Delete removes the network", async () => {
    const a = await onWorker.start(app("cp-net-a", netA));
    const b = await onManager.start(app("cp-net-b", netB));
    // Both are created by the adapter, each an overlay of its own (not the nodes' default bridge).
    for (const name of [netA, netB]) expect(JSON.parse(await docker(s.managerSock, "network", "inspect", name))[0]).toMatchObject({ Driver: "overlay", Scope: "swarm" });
    const addressA = await overlayAddress(a.id, netA);
    // The task's address on its node's gateway bridge, the other way out of an overlay task.
    const workerContainer = await docker(s.workerSock!, "ps", "-q", "--filter", `label=com.docker.swarm.service.id=${a.id}`);
    const gatewayA = (await docker(s.workerSock!, "exec", workerContainer, "/bin/busybox", "sh", "-c", "/bin/busybox ip -4 -o addr show eth1")).split(/\s+/)[3]!.split("/")[0]!;

    const own = await probe(netA, "manager", [addressA]);
    expect(own).toContain(`${addressA}:${img.PORT} open`);
    expect(own).toMatch(new RegExp(`${addressA.replace(/\./g, "\\.")}:9 .*refused`, "i"));

    // The node's own address too: the node set-up's egress rules (up.sh runs scripts/egress-firewall.sh --swarm) keep tasks off their host.
    const otherNode = await probe(netB, "manager", [addressA, gatewayA, s.managerAddr]);
    const sameNode = await probe(netB, "worker", [addressA, gatewayA, s.workerAddr!]);
    for (const out of [otherNode, sameNode]) {
      expect(out.split("\n").filter((line) => /:\d+ /.test(line))).toHaveLength(6);
      expect(out).not.toMatch(/ open|refused/i);
    }

    await onWorker.remove(a.id);
    await onWorker.removeNetwork(netA);
    await expect(docker(s.managerSock, "network", "inspect", netA)).rejects.toThrow(/not found|No such network/i);
    await onManager.remove(b.id);
    await onManager.removeNetwork(netB);
  }, 400_000);
});
