import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, freePort, generateSecrets, startDevServer } from "../../scripts/lib/dev-server";

/** Runs `npm start` until its banner is out; returns the banner lines and a stop function. */
async function npmStart(port: number, persistTo: string) {
  const child = spawn("npm", ["start"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), PERSIST_TO: persistTo },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  // Ctrl+C, as a person stops it; the whole group is killed if it is still there 20 s later.
  const stop = () =>
    new Promise<void>((ok) => {
      if (child.exitCode !== null || child.signalCode !== null) return ok();
      const kill = setTimeout(() => {
        try { process.kill(-child.pid!, "SIGKILL"); } catch { /* gone */ }
      }, 20_000);
      child.once("exit", () => {
        clearTimeout(kill);
        ok();
      });
      try { process.kill(-child.pid!, "SIGINT"); } catch { ok(); }
    });
  const started = Date.now();
  while (!/Press Ctrl\+C to stop/.test(out)) {
    if (Date.now() - started > 120_000 || child.exitCode !== null) {
      // Stopped as a person would, so no wrangler outlives the failure and holds its ports.
      await stop();
      throw new Error(`no banner after ${Math.round((Date.now() - started) / 1000)} s (exit code ${child.exitCode}):\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { out, stop };
}

describe("npm start", () => {
  const persistTo = mkdtempSync(join(tmpdir(), "control-plane-start-"));
  afterAll(() => rmSync(persistTo, { recursive: true, force: true }));

  it("prints a banner whose curl command reaches the Worker, and reuses the demo account", async () => {
    const port = await freePort();
    const first = await npmStart(port, persistTo);
    try {
      expect(first.out).toContain(`http://localhost:${port}/console`);
      expect(first.out).toContain("demo@example.com");
      // Custom domains check DNS with the DoH stand-in (or a resolver named in .dev.vars).
      expect(first.out).toMatch(/Custom domains: DNS from /);
      // Issue 13: the demo wallet is credited once with one Lite month; no secret is printed for it.
      expect(first.out).toMatch(/^ Demo wallet: 1,200 DA /m);
      expect(first.out).not.toMatch(/OPERATOR_TOKEN=|op_[A-Za-z0-9_-]{20,}/);
      const token = /^API token: (dbx_\w+)$/m.exec(first.out)?.[1];
      const database = /^Database: ([0-9a-f-]{36})$/m.exec(first.out)?.[1];
      expect(token).toBeDefined();
      expect(database).toBeDefined();
      const curlLine = /^\s+(curl .*\/export)$/m.exec(first.out)?.[1];
      expect(curlLine).toContain(database);
      // The banner's own command, run by the shell as a person would paste it.
      const { stdout } = await promisify(execFile)("bash", ["-c", `${curlLine} -o /dev/null -w '%{http_code}'`], { timeout: 60_000 });
      expect(["200", "404", "429"]).toContain(stdout);
      expect(stdout).not.toBe("500");
      await first.stop();

      const second = await npmStart(port, persistTo);
      await second.stop();
      expect(/^Database: ([0-9a-f-]{36})$/m.exec(second.out)?.[1]).toBe(database);
      expect(/^API token: (dbx_\w+)$/m.exec(second.out)?.[1]).not.toBe(token);
      expect(second.out).toMatch(/^ Demo wallet: 1,200 DA /m);
    } finally {
      await first.stop().catch(() => {});
    }
    // Two starts of up to 120 s each on a loaded machine, the request and two stops.
  }, 330_000);
});

describe("a bad setting", () => {
  it("stops the Worker at start-up with a message naming the variable", async () => {
    const persistTo = mkdtempSync(join(tmpdir(), "control-plane-badvar-"));
    try {
      await expect(startDevServer({ persistTo, vars: { ...generateSecrets(), RATE_LIMIT_BURST: "lots" } })).rejects.toThrow(
        /Worker refused to start\. Invalid configuration:\s+RATE_LIMIT_BURST must be a whole number, got "lots"/,
      );
    } finally {
      rmSync(persistTo, { recursive: true, force: true });
    }
  });
});
