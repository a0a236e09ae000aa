import { env } from "cloudflare:workers";
import { packTar } from "modern-tar";
import { ConsoleClient, creditAccount, uniqueEmail } from "./helpers";

/** Enough for many first deploys on any plan. */
export const TEST_CREDIT = 100_000;

/** A signed-up console client whose wallet holds `credit` DA (TEST_CREDIT unless told). */
export async function signedUpClient(options: { credit?: number; email?: string } = {}): Promise<ConsoleClient> {
  const client = new ConsoleClient();
  const email = options.email ?? uniqueEmail();
  await client.json("POST", "/console/api/signup", { email, password: "correct horse battery" });
  const credit = options.credit ?? TEST_CREDIT;
  if (credit > 0) await creditAccount(email, credit);
  return client;
}

/**
 * Uploads files as the `main` branch archive of a repository on the forge stand-in, wrapped in a
 * top folder as forges do; returns the repository URL.
 */
export async function publishRepository(name: string, files: Record<string, string>, branch = "main", options: { token?: string; topFolder?: string } = {}): Promise<string> {
  const top = `${options.topFolder ?? `${name}-${branch}`}/`;
  const tar = await packTar([
    { header: { name: top, type: "directory", size: 0 } },
    ...Object.entries(files).map(([path, body]) => ({ header: { name: top + path, size: new TextEncoder().encode(body).length, mode: 0o644 }, body })),
  ]);
  const gz = await new Response(new Blob([tar]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
  const repository = `${env.FORGE_URL}/acme/${name}`;
  // A private one (`token`) is served only at the forge API's path, and only with the token.
  const res = options.token
    ? await fetch(`${env.FORGE_URL}/api/v1/repos/acme/${name}/archive/${branch}.tar.gz`, { method: "PUT", body: gz, headers: { "X-Require-Token": options.token } })
    : await fetch(`${repository}/archive/${branch}.tar.gz`, { method: "PUT", body: gz });
  if (res.status !== 201) throw new Error(`forge upload answered ${res.status}`);
  return repository;
}

/** A Dockerfile the fake engine runs as an HTTP server on 8080 serving /www; `slow` holds the build. */
export function httpdFiles(page: string, options: { buildSeconds?: number } = {}): Record<string, string> {
  const hold = options.buildSeconds ? `RUN ["/bin/busybox", "sleep", "${options.buildSeconds}"]\n` : "";
  return {
    Dockerfile: `FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\n${hold}EXPOSE 8080\nCMD ["/bin/busybox", "httpd", "-f", "-p", "0.0.0.0:8080", "-h", "/www"]\n`,
    busybox: "fake busybox",
    "www/index.html": page,
  };
}

export interface AppJson {
  id: string;
  subdomain: string;
  status: string;
  deploy_in_progress: boolean;
  plan: string;
  latest_deploy: { id: string; status: string; failure?: { kind: string; message: string } } | null;
}

export async function waitForDeploy(client: ConsoleClient, appId: string, timeoutMs = 20_000): Promise<AppJson> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const app = await client.json<AppJson>("GET", `/console/api/apps/${appId}`);
    if (!app.deploy_in_progress) return app;
    if (Date.now() > deadline) throw new Error(`deploy of ${appId} still running after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Sets what the forge's Gitea branch API answers for a repository published above (its head commit). */
export async function publishCommit(name: string, commit: { sha: string; message: string }, branch = "main"): Promise<void> {
  const res = await fetch(`${env.FORGE_URL}/api/v1/repos/acme/${name}/branches/${branch}`, {
    method: "PUT",
    body: JSON.stringify({ name: branch, commit: { id: commit.sha, message: commit.message } }),
  });
  if (res.status !== 201) throw new Error(`forge upload answered ${res.status}`);
}
