#!/usr/bin/env node
/** Entry point of `dbexport` (the package's bin, built by `npm run build:cli`) and `npm run export`. */
import { homedir } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { main } from "./main";

process.exitCode = await main({
  argv: process.argv.slice(2),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  home: homedir(),
  fetch: globalThis.fetch,
  sleep: (ms) => sleep(ms),
  now: Date.now,
});
