/**
 * `tsx scripts/bench/profile-rebuild.ts [builder]`: where a warm redeploy's time goes. Polls the
 * app's latest deploy every 20 ms and prints when it entered each status (queued, building,
 * starting, live) and when the hostname served the new page, for a few one-file redeploys.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitFiles, createRepository, startDevForge } from "../dev-forge";
import { startDockerForwarder } from "../lib/docker-forwarder";
import { generateSecrets, startDevServer } from "../lib/dev-server";
import { creditAccount } from "../lib/seed";
import { type AppJson, PLAN, PORT, Session, settledOnOne, workerVars } from "./apps";
import { get } from "./apps-docker";

const builder = process.argv[2] ?? "auto";
const rounds = Number(process.argv[3] ?? 3);
const busybox = readFileSync("/bin/busybox");
const page = (n: number) => `<h1>v${n}</h1>\n`;
const files = (n: number) => ({
  Dockerfile: `FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "sh", "-c", "/bin/busybox sleep 2"]\nCOPY www /www\nEXPOSE ${PORT}\nCMD ["/bin/busybox", "httpd", "-f", "-p", "0.0.0.0:${PORT}", "-h", "/www"]\n`,
  busybox,
  "www/index.html": page(n),
});

const dir = mkdtempSync(join(tmpdir(), "profile-rebuild-"));
mkdirSync(join(dir, "forge"));
const [engine, forge] = await Promise.all([startDockerForwarder(), startDevForge({ root: join(dir, "forge"), port: 0 })]);
const secrets = generateSecrets();
const worker = await startDevServer({ persistTo: join(dir, "state"), vars: { ...workerVars(engine.url, secrets), RUNTIME_BUILDER: builder } });
const session = new Session(worker.url);
let app: AppJson | null = null;
try {
  const repo = await createRepository(join(dir, "forge"), "p", "r", files(0), { forgeUrl: forge.url, modes: { busybox: 0o755 } });
  const email = `profile-${Date.now()}@example.com`;
  await session.json("POST", "/console/api/signup", { email, password: "bench-password-1" });
  await creditAccount(worker.url, secrets.OPERATOR_TOKEN, email, 100_000, "credit");
  app = await session.json<AppJson>("POST", "/console/api/apps", { name: "P", repository: repo, subdomain: `p${Date.now().toString(36)}`, plan: PLAN });
  const proxy = { url: `http://127.0.0.1:${worker.port}/`, host: `${app.hostname}:${worker.port}` };
  for (let n = 0; n <= rounds; n++) {
    if (n > 0) await commitFiles(join(dir, "forge"), "p", "r", { "www/index.html": page(n) }, { message: `v${n}` });
    await settledOnOne(engine.url, app.id, 60_000);
    const t0 = performance.now();
    const { deploy } = await session.json<{ deploy: { id: string } }>("POST", `/console/api/apps/${app.id}/deploy`);
    const seen: string[] = [`posted ${(performance.now() - t0).toFixed(0)}`];
    let last = "";
    for (;;) {
      const now = await session.json<AppJson>("GET", `/console/api/apps/${app.id}`);
      const status = now.latest_deploy?.id === deploy.id ? now.latest_deploy.status : "?";
      if (status !== last) {
        seen.push(`${status} ${(performance.now() - t0).toFixed(0)}`);
        last = status;
      }
      if (status === "live" || status === "failed") break;
      await new Promise((r) => setTimeout(r, 20));
    }
    for (;;) {
      const answer = await get(proxy.url, proxy.host).catch(() => null);
      if (answer?.status === 200 && answer.body === page(n)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    seen.push(`serving ${(performance.now() - t0).toFixed(0)}`);
    console.log(`round ${n}: ${seen.join(", ")} ms`);
    if (n === rounds) console.log(await session.text(`/console/api/apps/${app.id}/deploys/${deploy.id}/log`));
  }
} finally {
  if (app) await session.json("DELETE", `/console/api/apps/${app.id}`).catch(() => undefined);
  await worker.stop();
  await Promise.allSettled([engine.close(), forge.close()]);
  rmSync(dir, { recursive: true, force: true });
}
