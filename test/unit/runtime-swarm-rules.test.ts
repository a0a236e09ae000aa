/**
 * The Swarm adapter's pure rules: which task is the instance (by the generation's port), where it
 * answers (node address), which port a new generation publishes (inside INSTANCE_PORT_RANGE, never
 * one in use), what a push reported, and the X-Registry-Auth encoding.
 */
import { describe, expect, it } from "vitest";
import {
  type SwarmTask,
  appOverlaySpec,
  generationOutcome,
  nodeAddress,
  swarmPort,
  pushResult,
  registryAuthHeader,
  splitReference,
  shellQuote,
  taskHealthcheck,
} from "../../src/runtime/swarm-rules";
import { swarmProblems, noNewPrivilegesProblems, probeServiceSpec, probeSettled, NO_NEW_PRIVILEGES_UNCHECKED } from "../../src/runtime/swarm-report-rules";

const task = (port: number, state: string, extra: Partial<SwarmTask> = {}, desired = "running"): SwarmTask => ({
  ID: `t-${port}-${state}`,
  NodeID: "n1",
  DesiredState: desired,
  Spec: { ContainerSpec: { Labels: { "cp.port": String(port) } } },
  Status: { State: state, ...(state === "running" ? { PortStatus: { Ports: [{ TargetPort: 8080, PublishedPort: port }] } } : {}) },
  ...extra,
});

describe("generationOutcome", () => {
  it.each([
    ["no task yet", [], "waiting"],
    ["the generation's task runs", [task(20001, "running")], "running"],
    ["only an older generation runs", [task(20000, "running")], "waiting"],
    ["the task is still pulling", [task(20001, "preparing")], "waiting"],
    ["the process ended with a code", [task(20001, "failed", { Status: { State: "failed", ContainerStatus: { ExitCode: 3 } } })], "exited"],
    ["the process ended cleanly", [task(20001, "complete", { Status: { State: "complete", ContainerStatus: { ExitCode: 0 } } })], "exited"],
    ["the swarm could not pull", [task(20001, "rejected", { Status: { State: "rejected", Err: "No such image" } })], "refused"],
    ["a running task told to shut down is not the instance", [task(20001, "running", {}, "shutdown")], "waiting"],
    ["the scheduler finds the port taken", [task(20001, "pending", { Status: { State: "pending", Err: "no suitable node (host-mode port already in use on 1 node)" } })], "portTaken"],
    ["the node cannot bind the port", [task(20001, "rejected", { Status: { State: "rejected", Err: "driver failed programming external connectivity: listen tcp4 0.0.0.0:20001: bind: address already in use" } })], "portTaken"],
  ] as [string, SwarmTask[], string][])("%s: %s", (_name, tasks, kind) => {
    expect(generationOutcome(tasks, 20001).kind).toBe(kind);
  });

  it("reports the exit code, and the swarm's reason when it refused", () => {
    expect(generationOutcome([task(1, "failed", { Status: { State: "failed", ContainerStatus: { ExitCode: 3 } } })], 1)).toEqual({ kind: "exited", exitCode: 3 });
    expect(generationOutcome([task(1, "rejected", { Status: { State: "rejected", Err: "No such image: x" } })], 1)).toEqual({ kind: "refused", reason: "No such image: x" });
  });
});

describe("swarmPort", () => {
  const range = { first: 20000, last: 20003 };
  it.each([
    ["the random start when free", [], 0, 20000],
    ["the next free one after a taken start", [20000, 20001], 0, 20002],
    ["wraps around the range", [20003], 0.99, 20000],
    ["none when every port is taken", [20000, 20001, 20002, 20003], 0.5, null],
  ] as [string, number[], number, number | null][])("%s", (_name, used, random, expected) => {
    expect(swarmPort(used, range, () => random)).toBe(expected);
  });

  it("never leaves the range, whatever the random source and ports in use", () => {
    for (let i = 0; i < 200; i++) {
      const port = swarmPort([20000, 29999, 1234], { first: 20000, last: 29999 }, () => i / 200)!;
      expect(port).toBeGreaterThanOrEqual(20000);
      expect(port).toBeLessThanOrEqual(29999);
      expect([20000, 29999]).not.toContain(port);
    }
  });
});

describe("nodeAddress", () => {
  it.each([
    ["the node's address", { ID: "n", Status: { Addr: "10.0.0.2" } }, "10.0.0.2"],
    ["the operator's label first", { ID: "n", Spec: { Labels: { "cp.address": "node1.internal" } }, Status: { Addr: "10.0.0.2" } }, "node1.internal"],
    ["a manager reporting 0.0.0.0 uses its manager address", { ID: "n", Status: { Addr: "0.0.0.0" }, ManagerStatus: { Addr: "10.0.0.1:2377" } }, "10.0.0.1"],
    ["none known", { ID: "n", Status: { Addr: "0.0.0.0" } }, null],
  ] as [string, Parameters<typeof nodeAddress>[0], string | null][])("%s", (_name, node, expected) => {
    expect(nodeAddress(node)).toBe(expected);
  });
});

describe("pushResult", () => {
  it.each([
    ["the digest of the aux message", [{ status: "Pushed" }, { aux: { Tag: "1", Digest: "sha256:ab", Size: 5 } }], { digest: "sha256:ab" }],
    ["the first error", [{ status: "Preparing" }, { errorDetail: { message: "denied" }, error: "denied" }], { error: "denied" }],
    ["no digest is an error", [{ status: "Pushed" }], { error: "the registry did not report the pushed image's digest" }],
  ] as [string, unknown[], unknown][])("%s", (_name, messages, expected) => {
    expect(pushResult(messages)).toEqual(expected);
  });
});

describe("registryAuthHeader and splitReference", () => {
  it("encodes the credentials as base64url JSON, and `{}` without credentials", () => {
    const header = registryAuthHeader({ username: "ci", password: "p?>>" }, "reg.example.net");
    expect(header).not.toMatch(/[+/]/);
    const json = atob(header.replace(/-/g, "+").replace(/_/g, "/"));
    expect(JSON.parse(json)).toEqual({ username: "ci", password: "p?>>", serveraddress: "reg.example.net" });
    expect(atob(registryAuthHeader(null, "reg"))).toBe("{}");
  });

  it.each([
    ["cp-app-1:d1", { name: "cp-app-1", tag: "d1" }],
    ["10.0.0.1:5000/cp-app-1:d1", { name: "10.0.0.1:5000/cp-app-1", tag: "d1" }],
    ["10.0.0.1:5000/cp-app-1", { name: "10.0.0.1:5000/cp-app-1", tag: "latest" }],
  ])("splits %s", (image, expected) => {
    expect(splitReference(image)).toEqual(expected);
  });
});

describe("swarmProblems (the start-up report)", () => {
  const manager = { Swarm: { LocalNodeState: "active", ControlAvailable: true }, SecurityOptions: ["name=seccomp,profile=default"] };
  const ready = { ID: "n1", Spec: { Availability: "active" }, Status: { State: "ready", Addr: "10.0.0.1" } };
  it.each([
    ["a sound swarm", manager, [ready], []],
    ["not a manager", { ...manager, Swarm: { LocalNodeState: "inactive" } }, [ready], [/not a Docker Swarm manager/]],
    ["every node drained", manager, [{ ...ready, Spec: { Availability: "drain" } }], [/No node of the swarm is ready and active/]],
    ["a node with no address", manager, [ready, { ID: "n2", Spec: { Availability: "active" }, Status: { State: "ready", Addr: "0.0.0.0" } }], [/Node n2 reports no address/]],
  ] as [string, Parameters<typeof swarmProblems>[0], Parameters<typeof swarmProblems>[1], RegExp[]][])("%s", (_name, info, nodes, expected) => {
    const problems = swarmProblems(info, nodes);
    expect(problems).toHaveLength(expected.length);
    expected.forEach((pattern, i) => expect(problems[i]).toMatch(pattern));
  });
});

describe("noNewPrivilegesProblems (issue 24: the report checks each node's no-new-privileges)", () => {
  const node = (id: string, host: string, availability = "active") => ({ ID: id, Description: { Hostname: host }, Spec: { Availability: availability }, Status: { State: "ready", Addr: "10.0.0.1" } });
  const manager = node("m1aaaaaaaaaaaaaaa", "manager");
  const worker = node("w1bbbbbbbbbbbbbbb", "worker");
  const status = (flag: 0 | 1) => `Name:\tcat\nSeccomp:\t2\nNoNewPrivs:\t${flag}\nSpeculation_Store_Bypass:\tthread vulnerable\n`;
  it.each([
    ["both nodes set it", [manager, worker], [{ nodeId: manager.ID, state: "complete", output: status(1) }, { nodeId: worker.ID, state: "complete", output: status(1) }], []],
    [
      "the worker does not",
      [manager, worker],
      [{ nodeId: manager.ID, state: "complete", output: status(1) }, { nodeId: worker.ID, state: "complete", output: status(0) }],
      [/^Node worker \(w1bbbbbbbbbb\) lets containers gain privileges: set "no-new-privileges": true in \/etc\/docker\/daemon\.json there and restart dockerd\.$/],
    ],
    ["a drained node is not asked", [manager, node("d1", "drained", "drain")], [{ nodeId: manager.ID, state: "complete", output: status(1) }], []],
    ["a node whose task never ended", [manager], [{ nodeId: manager.ID, state: "preparing", output: "" }], [/^Node manager \(m1aaaaaaaaaa\) did not finish the no-new-privileges probe in time; it was not checked\.$/]],
    ["a node with no task at all", [manager], [], [/did not finish the no-new-privileges probe in time/]],
    [
      "an image the node could not pull",
      [manager],
      [{ nodeId: manager.ID, state: "rejected", error: "No such image: reg/probe:1", output: "" }],
      [/^Node manager \(m1aaaaaaaaaa\) could not run the no-new-privileges probe \(No such image: reg\/probe:1\); it was not checked\.$/],
    ],
    ["an image without cat", [manager], [{ nodeId: manager.ID, state: "complete", output: "exec: cat: not found\n" }], [/printed no NoNewPrivs line: SWARM_PROBE_IMAGE needs `cat`/]],
    ["an earlier failed task does not hide a finished one", [manager], [{ nodeId: manager.ID, state: "failed", error: "x", output: "" }, { nodeId: manager.ID, state: "complete", output: status(1) }], []],
  ] as [string, Parameters<typeof noNewPrivilegesProblems>[0], Parameters<typeof noNewPrivilegesProblems>[1], RegExp[]][])("%s", (_name, nodes, runs, expected) => {
    const problems = noNewPrivilegesProblems(nodes, runs);
    expect(problems).toHaveLength(expected.length);
    expected.forEach((pattern, i) => expect(problems[i]).toMatch(pattern));
  });

  it("waits until every usable node's task has ended", () => {
    const task = (nodeId: string, state: string) => ({ ID: `t-${nodeId}`, NodeID: nodeId, Status: { State: state } });
    expect(probeSettled([manager, worker], [task(manager.ID, "complete")])).toBe(false);
    expect(probeSettled([manager, worker], [task(manager.ID, "complete"), task(worker.ID, "running")])).toBe(false);
    expect(probeSettled([manager, worker], [task(manager.ID, "complete"), task(worker.ID, "rejected")])).toBe(true);
    expect(probeSettled([manager, node("d1", "drained", "drain")], [task(manager.ID, "failed")])).toBe(true);
  });

  it("runs once per node, with no restart, small limits and no port", () => {
    const spec = probeServiceSpec("reg:5000/probe:1", "cp-probe-x") as { Mode: unknown; TaskTemplate: { ContainerSpec: { Command: string[] }; RestartPolicy: unknown }; EndpointSpec?: unknown };
    expect(spec.Mode).toEqual({ GlobalJob: {} });
    expect(spec.TaskTemplate.ContainerSpec.Command).toEqual(["cat", "/proc/self/status"]);
    expect(spec.TaskTemplate.RestartPolicy).toEqual({ Condition: "none" });
    expect(spec.EndpointSpec).toBeUndefined();
  });

  it("says plainly when there is no probe image to check with", () => {
    expect(NO_NEW_PRIVILEGES_UNCHECKED).toMatch(/set SWARM_PROBE_IMAGE/);
  });
});

describe("taskHealthcheck (the app's health check as the task's own)", () => {
  const check = { path: "/healthz", expect: "2xx-3xx" as const, timeoutSeconds: 3, graceSeconds: 10, intervalSeconds: 30, retries: 3 };
  it("probes the port inside the instance, with the intervals in nanoseconds", () => {
    expect(taskHealthcheck(check, 8080)).toEqual({
      Test: ["CMD-SHELL", "wget -q -O /dev/null 'http://127.0.0.1:8080/healthz' || curl -fsS -o /dev/null 'http://127.0.0.1:8080/healthz' || exit 1"],
      Interval: 30e9,
      Timeout: 3e9,
      StartPeriod: 10e9,
      Retries: 3,
    });
  });
  it("`any` passes on any HTTP answer", () => {
    expect(taskHealthcheck({ ...check, expect: "any" }, 3000).Test[1]).toBe(
      "wget -S -O /dev/null 'http://127.0.0.1:3000/healthz' 2>&1 | grep -q 'HTTP/' || curl -sS -o /dev/null 'http://127.0.0.1:3000/healthz' || exit 1",
    );
  });
  it.each([
    ["a quote cannot end the quoting", "/a'; rm -rf / #", "'http://127.0.0.1:80/a'\\''; rm -rf / #'"],
    ["$() stays text inside single quotes", "/$(id)", "'http://127.0.0.1:80/$(id)'"],
    ["a path without its slash gets one", "ping", "'http://127.0.0.1:80/ping'"],
  ])("%s", (_name, path, quoted) => {
    expect(taskHealthcheck({ ...check, path }, 80).Test[1]).toContain(`-O /dev/null ${quoted} ||`);
  });
  it.each([
    ["a", "'a'"],
    ["it's", "'it'\\''s'"],
    ["", "''"],
  ])("shellQuote(%j) = %s", (text, quoted) => expect(shellQuote(text)).toBe(quoted));
});

describe("appOverlaySpec (each app's own network on a swarm)", () => {
  it.each([
    [true, { encrypted: "" }],
    [false, {}],
  ])("an overlay only services join, encrypted: %s", (encrypted, options) => {
    expect(appOverlaySpec("control-plane-app-a1", { app: "a1" }, encrypted)).toEqual({
      Name: "control-plane-app-a1",
      Driver: "overlay",
      CheckDuplicate: true,
      Attachable: false,
      Internal: false,
      Labels: { app: "a1" },
      Options: options,
    });
  });
});
