/**
 * The instance settings rules (app isolation, "Containers"): plan -> engine settings, and when an
 * instance that keeps exiting counts as crashed.
 */
import { describe, expect, it } from "vitest";
import { PLAN_IDS, type PlanId, planLimits } from "../../src/apps/plans";
import { type InstanceView, viewInstance } from "../../src/apps/views";
import type { InstanceRunState } from "../../src/runtime/types";
import { defaultBindAddress } from "../../src/runtime/docker";
import { CAP_DROP, CAP_KEPT, CRASH_RULE, type ObservedProcess, instanceHealth, instanceHostConfig } from "../../src/runtime/instance-settings";

const MiB = 1024 * 1024;
const binding = { containerPort: 3000, hostIp: "127.0.0.1", hostPort: 20001 };

describe("plan -> engine settings: Memory = MemorySwap, NanoCpus and PidsLimit per plan", () => {
  it.each<[PlanId, number, number, number]>([
    ["lite", 256 * MiB, 250_000_000, 128],
    ["starter", 512 * MiB, 500_000_000, 256],
    ["pro", 1024 * MiB, 1_000_000_000, 512],
  ])("%s", (plan, memory, nanoCpus, pids) => {
    const c = instanceHostConfig(planLimits(plan), binding, "cp-app-a1");
    expect(c).toMatchObject({ Memory: memory, MemorySwap: memory, NanoCpus: nanoCpus, PidsLimit: pids });
  });

  it("covers every plan", () => expect(PLAN_IDS).toEqual(["lite", "starter", "pro"]));
});

describe.each(PLAN_IDS)("the %s plan's instance", (plan) => {
  const c = instanceHostConfig(planLimits(plan), binding, "cp-app-a1");

  it.each(["NET_RAW", "MKNOD", "AUDIT_WRITE", "SETFCAP", "SYS_CHROOT"])("drops %s", (cap) => expect(c.CapDrop).toContain(cap));
  it.each(["CHOWN", "SETUID", "SETGID", "DAC_OVERRIDE", "FOWNER", "NET_BIND_SERVICE", "KILL"])("keeps %s, which common images need to start", (cap) => {
    expect(c.CapDrop).not.toContain(cap);
    expect(CAP_KEPT).toContain(cap);
  });
  it("adds no capability", () => expect(c).not.toHaveProperty("CapAdd"));
  it("sets no-new-privileges", () => expect(c.SecurityOpt).toEqual(["no-new-privileges"]));
  it("runs an init as PID 1", () => expect(c.Init).toBe(true));
  it("keeps a bounded log", () => expect(c.LogConfig).toEqual({ Type: "json-file", Config: { "max-size": "5m", "max-file": "2" } }));
  it("is restarted on failure, at most 5 times", () => expect(c.RestartPolicy).toEqual({ Name: "on-failure", MaximumRetryCount: 5 }));
  it("is never privileged, on the host's network, with bind mounts or devices", () => {
    expect(c.Privileged).toBe(false);
    expect(c.NetworkMode).not.toBe("host");
    expect(c.Binds).toEqual([]);
    expect(c.Mounts).toEqual([]);
    expect(c.Devices).toEqual([]);
    for (const key of ["CapAdd", "VolumesFrom", "PidMode", "IpcMode", "UTSMode", "UsernsMode", "CgroupParent", "DeviceRequests", "DeviceCgroupRules"]) expect(c).not.toHaveProperty(key);
  });
  it("joins the app's own network", () => expect(c.NetworkMode).toBe("cp-app-a1"));
  it("publishes only its port, on the given address and host port", () => {
    expect(c.PortBindings).toEqual({ "3000/tcp": [{ HostIp: "127.0.0.1", HostPort: "20001" }] });
  });
});

describe("capability sets", () => {
  it("dropped and kept never overlap", () => expect(CAP_DROP.filter((c) => (CAP_KEPT as readonly string[]).includes(c))).toEqual([]));
});

describe("port binding", () => {
  it("lets the engine pick when no host port is given", () => {
    expect(instanceHostConfig(planLimits("lite"), { ...binding, hostPort: 0 }).PortBindings["3000/tcp"]).toEqual([{ HostIp: "127.0.0.1", HostPort: "" }]);
  });
  it("without a network, the engine's default bridge (never the host's)", () => {
    expect(instanceHostConfig(planLimits("lite"), binding).NetworkMode).toBe("bridge");
  });
  it("a limits object without pids still gets a process limit", () => {
    expect(instanceHostConfig({ memoryBytes: 64 * MiB, cpus: 0.5 }, binding).PidsLimit).toBe(128);
  });
  it.each([
    ["127.0.0.1", "127.0.0.1"],
    ["localhost", "127.0.0.1"],
    ["[::1]", "127.0.0.1"],
    ["127.0.0.2", "127.0.0.1"],
    ["10.0.0.7", "10.0.0.7"],
    ["engine.internal.example", "127.0.0.1"],
  ])("published ports for an engine at %s bind to %s, never 0.0.0.0", (host, address) => {
    expect(defaultBindAddress(host)).toBe(address);
  });
});

describe("crashed: the engine gave up, or N restarts within a window", () => {
  const now = 1_000_000_000;
  const p = (status: ObservedProcess["status"], restarts: number, ageMs = 1000): ObservedProcess => ({ status, restarts, createdAt: now - ageMs });
  it.each<[string, ObservedProcess, string]>([
    ["running", p("running", 0), "running"],
    ["running after restarts", p("running", 4), "running"],
    ["restarting, first time", p("restarting", 0), "restarting"],
    ["restarting, fewer than N", p("restarting", CRASH_RULE.maxRestarts - 1), "restarting"],
    ["restarting, N within the window", p("restarting", CRASH_RULE.maxRestarts), "crashed"],
    ["restarting, N but spread beyond the window", p("restarting", CRASH_RULE.maxRestarts, CRASH_RULE.windowMs + 1), "restarting"],
    ["exited: the engine gave up", p("exited", CRASH_RULE.maxRestarts), "crashed"],
    ["exited with code 0 (on-failure does not restart it)", p("exited", 0), "crashed"],
    ["dead", p("dead", 0), "crashed"],
    ["created, not yet started", p("created", 0), "restarting"],
  ])("%s", (_name, observed, health) => {
    expect(instanceHealth(observed, now)).toBe(health);
  });
});

describe("the app JSON's instance field", () => {
  const now = 1_000_000_000;
  const state = (status: InstanceRunState["status"], restarts: number, exitCode: number | null, oomKilled = false): InstanceRunState => ({ id: "i", status, restarts, exitCode, oomKilled, createdAt: now - 1000 });
  it.each<[string, InstanceRunState, string | undefined, InstanceView]>([
    ["running", state("running", 0, null), undefined, { state: "running", restarts: 0, exit_code: null, oom_killed: false }],
    ["running again after a crash", state("running", 2, 1), undefined, { state: "running", restarts: 2, exit_code: 1, oom_killed: false }],
    ["restarting after an OOM kill", state("restarting", 1, 137, true), undefined, { state: "restarting", restarts: 1, exit_code: 137, oom_killed: true }],
    ["crashed, with its last output", state("exited", 5, 3), "boom\n", { state: "crashed", restarts: 5, exit_code: 3, oom_killed: false, output: "boom\n" }],
    ["output only when crashed", state("running", 0, null), "hello\n", { state: "running", restarts: 0, exit_code: null, oom_killed: false }],
  ])("%s", (_name, s, output, view) => expect(viewInstance(s, now, output)).toEqual(view));
});
