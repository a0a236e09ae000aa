import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { startDevDns } from "./scripts/dev-dns.ts";
import { startFakeCloudflare } from "./test/fakes/fake-cloudflare.ts";
import { startFakeDocker, startSilentEngine } from "./test/fakes/fake-docker.ts";
import { startFakeForge } from "./test/fakes/fake-forge.ts";
import { startFakeReceiver } from "./test/fakes/fake-receiver.ts";

/** Unit and integration tests, run inside workerd with the Worker's real bindings. */
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  // Worker tests reach a fake Docker Engine over real HTTP; unref'd so vitest can exit.
  const fakeDocker = await startFakeDocker({ unref: true });
  // And an engine that takes the connection but never answers.
  const silentEngine = await startSilentEngine({ unref: true });
  // The forge is outside the project: the Worker tests fetch repository archives from a stand-in.
  const forge = await startFakeForge();
  // DNS is outside the project too: custom-domain checks ask the DoH stand-in (records set per test).
  const dns = await startDevDns({ unref: true });
  // So is Cloudflare's API: the cloudflare hostname provider is tested against its test double.
  const cloudflare = await startFakeCloudflare();
  // And a customer's webhook receiver: alerts are delivered to a stand-in that checks their signature.
  const receiver = await startFakeReceiver();
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            RUNTIME_URL: fakeDocker.url,
            SILENT_ENGINE_URL: silentEngine.url,
            FORGE_URL: forge.url,
            // The forge stand-in is on loopback, which deploys fetch from only with this on.
            ALLOW_LOCAL_SOURCES: "true",
            // A switch's old instance drains 2 s and gets 1 s to exit (the production default is 30 s and 10 s).
            DRAIN_SECONDS: "2",
            // Metrics counts are written at once rather than batched for 10 s (docs/metrics.md).
            METRICS_FLUSH_SECONDS: "0",
            STOP_GRACE_SECONDS: "1",
            DNS_RESOLVER_URL: dns.resolverUrl,
            DNS_TIMEOUT_SECONDS: "2",
            // The console's host in Worker tests (test/integration/helpers.ts ORIGIN).
            SERVICE_HOSTNAMES: "control.test",
            // Shared addresses (TEST-NET-1) an apex custom domain, or a CNAME chain, may end in.
            CUSTOM_DOMAIN_ADDRESSES: "192.0.2.80",
            CLOUDFLARE_FAKE_URL: cloudflare.url,
            RECEIVER_URL: receiver.url,
            // Test-only secrets; real ones come from `wrangler secret put`.
            LINK_SIGNING_KEYS: "k2:test-signing-key-2-0123456789abcdefghijkl,k1:test-signing-key-1-0123456789abcdefghijkl",
            ENV_ENCRYPTION_KEY: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
            OPERATOR_TOKEN: "test-operator-token-0123456789abcdefghijkl",
            // Sequences of the app controls' model-based test (test/integration/app-model.test.ts).
            MODEL_RUNS: process.env.MODEL_RUNS ?? "200",
            // Its fast-check seed: empty for a fresh one each run (printed), or a number to replay.
            MODEL_SEED: process.env.MODEL_SEED ?? "",
          },
        },
      }),
    ],
    test: {
      setupFiles: ["./test/setup.ts"],
      // Two files at a time: a file's runtime starts while the other's tests wait on I/O (on 2 cores
      // this took a sample of integration files from 101 s to 59 s; three did no better).
      maxWorkers: 2,
      silent: "passed-only" as const,
      projects: [
        // Unit tests are pure functions: one runtime for all their files, since starting one per
        // file costs seconds each and isolates nothing they need.
        { extends: true as const, test: { name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false } },
        // Integration tests get a fresh runtime and storage per file, and time enough for a busy
        // 2-core machine (password hashing, a fake engine's builds): a test's time is not its subject.
        { extends: true as const, test: { name: "integration", include: ["test/integration/**/*.test.ts"], testTimeout: 30_000 } },
      ],
    },
  };
});
