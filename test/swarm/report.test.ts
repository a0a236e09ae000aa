/**
 * The swarm's start-up report (GET /admin/api/runtime) on a one-node swarm whose dockerd runs
 * without `--no-new-privileges`: Docker 20.10 ignores the option in a task spec, so only the
 * probe job (SWARM_PROBE_IMAGE, run once on every node) can tell, and the report names the node.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SwarmRuntime } from "../../src/runtime/swarm";
import { NO_NEW_PRIVILEGES_UNCHECKED } from "../../src/runtime/swarm-report-rules";
import * as img from "../runtime/images";
import { tarStream } from "../runtime/tar";
import { type TestSwarm, startSwarm } from "./swarm-env";

const run = promisify(execFile);

describe("the report on a node that lets containers gain privileges", () => {
  let s: TestSwarm;
  let hostname: string;
  const probeTag = "cp-probe:1";
  const runtime = (probeImage?: string) => new SwarmRuntime({ url: s.managerUrl, registry: s.registry, startTimeoutSeconds: 60, ...(probeImage ? { probeImage } : {}) });
  const docker = (...args: string[]) => run("docker", ["-H", `unix://${s.managerSock}`, ...args]).then((r) => r.stdout.trim());

  beforeAll(async () => {
    s = await startSwarm({ name: "cpnp", nodes: 1, subnet: "10.77.3", allowNewPrivileges: 1 });
    hostname = await docker("node", "ls", "--format", "{{.Hostname}}");
    const built = await runtime().build({ context: tarStream(img.probeContext(await readFile("/bin/busybox"))), dockerfile: "Dockerfile", tag: probeTag });
    expect(built).toEqual({ ok: true, image: probeTag });
  });
  afterAll(async () => s?.down());

  it("says the check was skipped when no probe image is set", async () => {
    expect(await runtime().report()).toEqual([NO_NEW_PRIVILEGES_UNCHECKED]);
  });

  it("names the node and the daemon option to set, and leaves no probe job behind", async () => {
    const problems = await runtime(`${s.registry}/${probeTag}`).report();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^Node ${hostname} \\([0-9a-z]{12}\\) lets containers gain privileges: set "no-new-privileges": true in /etc/docker/daemon\\.json there and restart dockerd\\.$`));
    expect(await docker("service", "ls", "-q", "--filter", "label=control-plane.probe")).toBe("");
  });

  it("says the node was not checked when the probe image cannot be pulled", async () => {
    const problems = await runtime(`${s.registry}/cp-probe-missing:1`).report();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^Node ${hostname} \\(.+\\) could not run the no-new-privileges probe \\(.+\\); it was not checked\\.$`));
  });
});
