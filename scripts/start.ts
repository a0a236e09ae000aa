/**
 * `npm start`: runs the Worker locally with `wrangler dev` on http://localhost:8787 (PORT to
 * change it), with local migrations applied, secrets generated into `.dev.vars` when missing,
 * and the demo account seeded. Prints a banner with everything needed to try the API.
 */
import { join } from "node:path";
import { ROOT, ensureDevVars, readDevVar, startDevServer } from "./lib/dev-server";
import { installEgressRules } from "./lib/egress";
import { setUpLocalDns, setUpLocalEngine, setUpLocalForge } from "./lib/local-apps";
import { reconcileAtStart } from "./lib/reconcile";
import { seedDemo } from "./lib/seed";

const port = Number(process.env.PORT ?? 8787);
const added = ensureDevVars();
if (added.length > 0) console.log(`Generated local secrets in .dev.vars: ${added.join(", ")}`);

const engine = await setUpLocalEngine(join(ROOT, ".dev.vars"));
// Installed and checked while the Worker starts; the banner waits for its one line.
const egressLine = engine.url ? installEgressRules() : Promise.resolve(null);
const forge = await setUpLocalForge(process.env.FORGE_ROOT ?? join(ROOT, ".wrangler", "forge"), process.env.FORGE_PORT ? Number(process.env.FORGE_PORT) : undefined).catch((err: Error) => {
  console.error(`The dev forge did not start (${err.message}); apps can still deploy from other forges.`);
  return null;
});

const dnsRecords = process.env.DNS_RECORDS ?? join(ROOT, ".wrangler", "dns-records.json");
const dns = await setUpLocalDns(join(ROOT, ".dev.vars"), dnsRecords, process.env.DNS_PORT ? Number(process.env.DNS_PORT) : undefined).catch((err: Error) => {
  console.error(`The DoH stand-in did not start (${err.message}); custom domains will ask the resolver in DNS_RESOLVER_URL.`);
  return null;
});

// The dev forge is on loopback: deploys may fetch from it (the deployed Worker keeps this off).
const allowLocalSources = readDevVar("ALLOW_LOCAL_SOURCES") ?? "true";
const server = await startDevServer({ port, persistTo: process.env.PERSIST_TO, inheritOutput: true, vars: { ALLOW_LOCAL_SOURCES: allowLocalSources } }).catch((err: Error) => {
  console.error(`\n${err.message}`);
  process.exit(1);
});
// Ctrl+C always ends the run: a helper that does not close within 10 s is not waited for.
const stop = () => {
  setTimeout(() => process.exit(0), 10_000).unref();
  void Promise.all([server.stop(), engine.close(), forge?.close(), dns?.close()]).then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
server.process.on("exit", (code) => process.exit(code ?? 0));

// The banner always comes, with "Press Ctrl+C to stop." as its last line: a demo account that
// could not be seeded is said in it, and the Worker goes on serving.
// The reconciler runs once now: a run killed mid-change may have left objects behind, or an app dark.
const egress = await egressLine;
const [demo, reconciled] = await Promise.all([seedDemo(server.url, readDevVar("OPERATOR_TOKEN")).catch((err: Error) => err), reconcileAtStart(server.url, readDevVar("OPERATOR_TOKEN"))]);
const demoLines =
  demo instanceof Error
    ? ` The demo account could not be seeded: ${demo.message}
 Sign up in the console instead; the next start tries the demo account again.`
    : ` Login:     ${demo.email} / ${demo.password}

API token: ${demo.token}
Database: ${demo.databaseId}

 Start an export (the reply holds the signed download link):
   curl -sS -X POST -H "Authorization: Bearer ${demo.token}" ${server.url}/api/v1/dbs/${demo.databaseId}/export`;
console.log(`
────────────────────────────────────────────────────────────────────────
 Control plane running at ${server.url}

 Console:   ${server.url}/console
 API docs:  ${server.url}/docs
${demoLines}

 ${engine.status}
${egress ? ` ${egress}` : ""}
${forge ? ` Dev forge: ${forge.url} serves the git repositories under ${forge.root}/<owner>/<repo>` : ""}
${forge?.sample ? ` Sample app repository: ${forge.sample} (Apps -> New app, then Deploy)` : ""}
${forge ? ` Deploy on push: the dev forge sends a push webhook for each new commit to the hooks added with POST ${forge.url}/api/v1/repos/<owner>/<repo>/hooks (README, "Deploy on push")` : ""}
${dns ? ` ${dns.status}` : ""}
 ${reconciled}
${!(demo instanceof Error) && demo.balance !== null ? ` Demo wallet: ${demo.balance.toLocaleString("en-US")} DA (credit more with the operator route, see the README)` : ""}

 Press Ctrl+C to stop.
────────────────────────────────────────────────────────────────────────
`);
