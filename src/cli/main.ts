/**
 * The client's command: parses the command line, runs the export and prints the outcome. Every
 * effect is passed in, so tests drive it in-process; `bin.ts` passes the real ones.
 */
import { USAGE, parseCommand } from "./args";
import { CliError, ExitCode } from "./exit-codes";
import { type ExportResult, runExport } from "./export";
import type { Effects } from "./http";
import { type Reporter, type TextStream, createReporter } from "./progress";
import { LinkStore, stateDirectory } from "./state";

/** The process around one run. */
export interface CliContext extends Effects {
  argv: string[];
  env: Record<string, string | undefined>;
  stdout: TextStream;
  stderr: TextStream;
  cwd: string;
  home: string;
}

/** The summary: one JSON line with `--json`, else one sentence (none with `--quiet`). */
export function formatSummary(result: ExportResult, json: boolean, quiet: boolean): string {
  if (json) {
    const { databaseId, exportId, file, bytes, sha256 } = result;
    return JSON.stringify({ ok: true, database_id: databaseId, export_id: exportId ?? null, file, bytes, sha256 }) + "\n";
  }
  return quiet ? "" : `saved ${result.file} (${result.bytes} bytes, sha256 ${result.sha256})\n`;
}

/** Runs the command line in `context`; resolves to the exit code. */
export async function main(context: CliContext): Promise<number> {
  let json = false;
  let reporter: Reporter | undefined;
  try {
    const command = parseCommand(context.argv, context.env);
    if (command.kind === "help") {
      context.stdout.write(USAGE);
      return ExitCode.OK;
    }
    const { options } = command;
    json = options.json;
    reporter = createReporter(context.stderr, options.quiet, context.now);
    const store = new LinkStore(stateDirectory(context.env, context.home), context.now);
    const result = await runExport(options, { ...context, store, reporter, directory: context.cwd });
    context.stdout.write(formatSummary(result, options.json, options.quiet));
    return ExitCode.OK;
  } catch (error) {
    reporter?.finish();
    const failure = error instanceof CliError ? error : new CliError(ExitCode.FAILURE, (error as Error).message ?? String(error));
    const hint = failure.exitCode === ExitCode.USAGE ? " (see --help)" : "";
    context.stderr.write(`dbexport: ${failure.message}${hint}\n`);
    if (json) {
      const line = { ok: false, exit_code: failure.exitCode, code: failure.code ?? null, error: failure.message };
      context.stdout.write(JSON.stringify(line) + "\n");
    }
    return failure.exitCode;
  }
}
