/**
 * Fast rebuilds on the Docker engine: which builder a build gets, the query each builder is given
 * (limits; the app's cache scope, never another app's cache), and the build cache scope of an app.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config";
import { type Builder, type BuilderChoice, buildQuery, chooseBuilder, repositoryOf } from "../../src/runtime/docker-build";
import { buildCacheScope } from "../../src/source/cache-scope";

const limits = { memoryBytes: 1024 ** 3, cpus: 1 };

describe("chooseBuilder (BuildKit where the engine has it; the classic builder where it does not, or where limits must hold)", () => {
  it.each<[BuilderChoice, boolean, boolean, Builder]>([
    ["auto", true, false, "buildkit"],
    ["auto", true, true, "classic"],
    ["auto", false, false, "classic"],
    ["buildkit", true, true, "buildkit"],
    ["buildkit", false, false, "classic"],
    ["classic", true, false, "classic"],
  ])("%s, engine has BuildKit: %s, limits: %s -> %s", (choice, hasBuildKit, withLimits, expected) => {
    expect(chooseBuilder(choice, hasBuildKit, withLimits ? { limits } : {})).toBe(expected);
  });
});

describe("buildQuery (each app's cache kept between its deploys, never shared with another app)", () => {
  const scope = "0123456789abcdef0123456789abcdef";
  const spec = { tag: "control-plane/app-a1:d2", dockerfile: "Dockerfile", cacheScope: scope };
  // pull: base images always through their registry, never another tenant's copy on the engine.
  const base = { t: spec.tag, dockerfile: "Dockerfile", rm: "1", forcerm: "1", pull: "1" };

  it.each<[string, Builder, Parameters<typeof buildQuery>[1], string[], Record<string, string>]>([
    [
      "BuildKit: the scope as an extra host (in every RUN's cache key) and the cache-mount namespace",
      "buildkit",
      spec,
      [],
      { ...base, version: "2", extrahosts: `${scope}.build-cache.invalid:192.0.2.1`, buildargs: JSON.stringify({ BUILDKIT_CACHE_MOUNT_NS: scope }) },
    ],
    ["BuildKit without a scope reuses nothing", "buildkit", { ...spec, cacheScope: undefined }, [], { ...base, version: "2", nocache: "1" }],
    ["a scope that is not a DNS label is not used", "buildkit", { ...spec, cacheScope: "a.b:1" }, [], { ...base, version: "2", nocache: "1" }],
    ["classic: the app's own earlier images are the only cache sources", "classic", spec, ["control-plane/app-a1:d1", spec.tag], { ...base, cachefrom: JSON.stringify(["control-plane/app-a1:d1"]) }],
    ["classic first build: nothing to reuse, so no engine-wide cache either", "classic", spec, [], { ...base, nocache: "1" }],
    ["classic without a scope reuses nothing", "classic", { ...spec, cacheScope: undefined }, ["control-plane/app-a1:d1"], { ...base, nocache: "1" }],
    [
      "limits go to both (BuildKit's engine ignores them; chooseBuilder decides)",
      "classic",
      { ...spec, limits: { memoryBytes: 512 * 1024 * 1024, cpus: 0.5 } },
      [],
      { ...base, memory: String(512 * 1024 * 1024), memswap: String(512 * 1024 * 1024), cpuperiod: "100000", cpuquota: "50000", nocache: "1" },
    ],
  ])("%s", (_name, builder, s, ownImages, expected) => {
    expect(buildQuery(builder, s, ownImages)).toEqual(expected);
  });

  it.each([
    ["control-plane/app-a1:d2", "control-plane/app-a1"],
    ["registry.example.net:5000/apps/app-a1:d2", "registry.example.net:5000/apps/app-a1"],
    ["registry.example.net:5000/apps/app-a1", "registry.example.net:5000/apps/app-a1"],
  ])("repositoryOf(%s) = %s", (tag, repository) => {
    expect(repositoryOf(tag)).toBe(repository);
  });
});

describe("buildCacheScope (a secret per app)", () => {
  const keys = [{ kid: "k2", key: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" }];
  const other = [{ kid: "k3", key: "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=" }];

  it("is the same for an app at every deploy, another for every other app and every other key", async () => {
    const a = await buildCacheScope(keys, "app-a");
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(await buildCacheScope(keys, "app-a")).toBe(a);
    expect(await buildCacheScope(keys, "app-b")).not.toBe(a);
    expect(await buildCacheScope(other, "app-a")).not.toBe(a);
    expect(a).not.toContain("app-a");
  });
});

describe("RUNTIME_BUILDER", () => {
  const secrets = { LINK_SIGNING_KEYS: "k1:0123456789abcdef0123456789abcdef", ENV_ENCRYPTION_KEY: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" };
  it.each([
    [undefined, "auto"],
    ["buildkit", "buildkit"],
    [" classic ", "classic"],
  ])("%s -> %s", (raw, expected) => {
    expect(parseConfig({ ...secrets, ...(raw === undefined ? {} : { RUNTIME_BUILDER: raw }) }).RUNTIME_BUILDER).toBe(expected);
  });
  it("refuses another word, naming the setting", () => {
    expect(() => parseConfig({ ...secrets, RUNTIME_BUILDER: "kaniko" })).toThrow(/RUNTIME_BUILDER must be one of auto, buildkit, classic/);
  });
});
