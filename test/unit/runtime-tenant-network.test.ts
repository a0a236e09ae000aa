/**
 * Tenant networks on one Docker engine (src/runtime/tenant-network.ts): every bridge an app or a
 * build step runs on is named `cpa-…` within Linux's 15 bytes, so the host's egress rules match them
 * all with `-i cpa-+`; and the report's reading of the egress probe (src/runtime/egress-probe.ts).
 */
import { describe, expect, it } from "vitest";
import { EGRESS_PROBE_IMAGE, egressProblems } from "../../src/runtime/egress-probe";
import { BUILD_NETWORK, TENANT_BRIDGE_PREFIX, tenantBridgeName, tenantNetworkSpec } from "../../src/runtime/tenant-network";

describe("tenantBridgeName", () => {
  it.each([
    ["control-plane-app-01HZX3K2M8Q4W5E6R7T8Y9U0IP"],
    ["control-plane-app-a"],
    ["x"],
    ["a-network-name-much-longer-than-fifteen-bytes-of-an-interface-name"],
  ])("%s: cpa- and 11 base-36 characters, the same every time", (network) => {
    const name = tenantBridgeName(network);
    expect(name).toMatch(/^cpa-[0-9a-z]{11}$/);
    expect(name.length).toBeLessThanOrEqual(15);
    expect(tenantBridgeName(network)).toBe(name);
  });

  it("the build network's bridge is cpa-build", () => expect(tenantBridgeName(BUILD_NETWORK)).toBe("cpa-build"));

  it("differs between networks (10,000 app networks, no two alike)", () => {
    const names = new Set(Array.from({ length: 10_000 }, (_, i) => tenantBridgeName(`control-plane-app-${i.toString(36)}`)));
    expect(names.size).toBe(10_000);
  });
});

describe("tenantNetworkSpec", () => {
  it("a plain bridge that reaches the internet, its interface named for the firewall's wildcard", () => {
    const spec = tenantNetworkSpec("control-plane-app-a1", { app: "a1" });
    expect(spec).toEqual({
      Name: "control-plane-app-a1",
      Driver: "bridge",
      CheckDuplicate: true,
      Internal: false,
      Attachable: false,
      Labels: { app: "a1" },
      Options: { "com.docker.network.bridge.name": tenantBridgeName("control-plane-app-a1") },
    });
    expect((spec.Options as Record<string, string>)["com.docker.network.bridge.name"]!.startsWith(TENANT_BRIDGE_PREFIX)).toBe(true);
  });
});

describe("egressProblems (the report's reading of the probe)", () => {
  it.each<[string, string, number, RegExp | null]>([
    ["no answer at all: blocked", "nc: timed out\n", 1, null],
    ["refused: the host answered", "nc: can't connect to remote host (172.19.0.1): Connection refused\n", 1, /got an answer from 172\.19\.0\.1 \(nc: can't connect .*Connection refused\)/],
    ["connected", "", 0, /got an answer from 172\.19\.0\.1 \(it connected\)/],
    ["no route: an answer too (an ICMP error came back)", "nc: can't connect to remote host (172.19.0.1): No route to host\n", 1, /No route to host/],
  ])("%s", (_name, output, exitCode, problem) => {
    const problems = egressProblems(output, exitCode, "172.19.0.1");
    if (problem === null) expect(problems).toEqual([]);
    else {
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(problem);
      expect(problems[0]).toMatch(/^Tenant code reaches this engine's host: .*scripts\/egress-firewall\.sh/);
    }
  });

  it("names the probe image the script builds", () => expect(EGRESS_PROBE_IMAGE).toBe("control-plane/egress-probe:1"));
});
