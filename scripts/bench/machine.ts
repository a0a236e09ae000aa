/** The machine and tool versions a bench run measured on, printed with the table. */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, totalmem } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "../lib/dev-server";
import type { Machine } from "./report";

/** First line of a tool's version output (nginx writes it to stderr). */
async function version(command: string, args: string[], pattern: RegExp): Promise<string> {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, { env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin` } });
    return pattern.exec(stdout + stderr)?.[1] ?? "?";
  } catch {
    return "missing";
  }
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "?";
  }
}

/** Cores, CPU model, memory and the versions of everything measured. */
export async function describeMachine(): Promise<Machine> {
  return {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? "unknown CPU",
    memoryGB: Math.round(totalmem() / 1e9),
    node: process.version,
    tools: {
      wrangler: packageVersion("wrangler"),
      workerd: packageVersion("workerd"),
      sqlite3: await version("sqlite3", ["--version"], /^(\S+)/),
      gzip: await version("gzip", ["--version"], /gzip (\S+)/),
      nginx: await version("nginx", ["-v"], /nginx\/(\S+)/),
      curl: await version("curl", ["--version"], /curl (\S+)/),
    },
  };
}
