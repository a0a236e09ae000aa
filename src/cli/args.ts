/** The command line: `export <database_id>` and its options, read into a checked request. */
import { parseArgs } from "node:util";
import { CliError, ExitCode } from "./exit-codes";

export const USAGE = `Usage: dbexport export <database_id> [options]

Starts an export of the database, waits for it, downloads the archive and checks its SHA-256.

Options:
  --base-url URL   API base address (default: $EXPORT_API_URL)
  --output FILE    where to save the archive (default: the server's file name)
  --quiet          no progress, phase lines or summary sentence; errors only
  --json           print one JSON summary line on stdout
  --no-wait        exit (code 8) instead of waiting out a cooldown or an export started elsewhere
  -h, --help       show this help

The API token is read from EXPORT_API_TOKEN only, never from a flag, so it stays out of shell history.
Started links are kept in $EXPORT_STATE_DIR (default ~/.local/state/dbexport) until they expire.

Exit codes:
  0 saved and verified        4 database not found, or export failed
  1 other failure             5 link or archive expired: start a new export
  2 usage                     6 checksum mismatch (part file deleted)
  3 token or link refused     7 network failure
                              8 --no-wait and no export can start now
`;

/** A checked `export` request plus how to report it. */
export interface CliOptions {
  databaseId: string;
  baseUrl: string;
  token: string;
  output?: string;
  quiet: boolean;
  json: boolean;
  noWait: boolean;
}

export type ParsedCommand = { kind: "help" } | { kind: "export"; options: CliOptions };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Reads argv (without node and the script) and the environment; throws CliError USAGE when wrong. */
export function parseCommand(argv: string[], env: Record<string, string | undefined>): ParsedCommand {
  if (argv.some((arg) => arg === "--token" || arg.startsWith("--token="))) {
    throw new CliError(ExitCode.USAGE, "there is no --token option: set EXPORT_API_TOKEN, so the token stays out of shell history");
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        "base-url": { type: "string" },
        output: { type: "string" },
        quiet: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
        "no-wait": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    throw new CliError(ExitCode.USAGE, (error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: "help" };
  const [command, databaseId, ...rest] = positionals;
  if (command !== "export" || databaseId === undefined || rest.length > 0) {
    throw new CliError(ExitCode.USAGE, "expected: export <database_id> [options]");
  }
  if (!UUID.test(databaseId)) throw new CliError(ExitCode.USAGE, `database id must be a UUID, got "${databaseId}"`);

  const base = values["base-url"] ?? env.EXPORT_API_URL;
  if (!base) throw new CliError(ExitCode.USAGE, "no API address: pass --base-url or set EXPORT_API_URL");
  if (!/^https?:\/\/[^/]/i.test(base)) throw new CliError(ExitCode.USAGE, `the base URL must start with http:// or https://, got "${base}"`);
  const token = env.EXPORT_API_TOKEN?.trim();
  if (!token) throw new CliError(ExitCode.USAGE, "EXPORT_API_TOKEN is not set (create a token in the console under API Tokens)");
  if (values.output === "") throw new CliError(ExitCode.USAGE, "--output needs a file name");

  return {
    kind: "export",
    options: {
      databaseId,
      baseUrl: base.replace(/\/+$/, ""),
      token,
      ...(values.output !== undefined ? { output: values.output } : {}),
      quiet: values.quiet,
      json: values.json,
      noWait: values["no-wait"],
    },
  };
}
