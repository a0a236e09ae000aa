/**
 * One `export` run: start the export (or find the link of the one already in flight), then
 * download and verify its archive. The decisions are in `poll.ts`; this file performs them.
 */
import { type SavedArchive, downloadArchive } from "./download";
import { CliError, ExitCode } from "./exit-codes";
import { exportIdOf } from "./headers";
import { type Effects, describeNetworkError, readReply } from "./http";
import { MAX_NETWORK_ATTEMPTS, decideStart, networkBackoffSeconds } from "./poll";
import type { Reporter } from "./progress";
import type { LinkStore, StoredLink } from "./state";

/** What the user asked for. */
export interface ExportRequest {
  databaseId: string;
  /** The API base address, without a trailing slash. */
  baseUrl: string;
  token: string;
  output?: string;
  noWait: boolean;
}

/** The outcome of a successful run, as the summary line reports it. */
export interface ExportResult extends SavedArchive {
  databaseId: string;
  exportId?: string;
}

/** Everything a run touches besides the network: the link store, the reporter, the directory. */
export interface ExportIo extends Effects {
  store: LinkStore;
  reporter: Reporter;
  /** Directory for a file named by the server. */
  directory: string;
}

/** Codes after which the stored link can never succeed, so it is dropped. */
const DEAD_LINK = new Set<number>([ExitCode.AUTH, ExitCode.NOT_FOUND, ExitCode.EXPIRED]);

function linkFromStartReply(body: unknown): StoredLink {
  const { url, expires_at: expiresAt } = (body ?? {}) as { url?: unknown; expires_at?: unknown };
  if (typeof url !== "string" || typeof expiresAt !== "string" || !/^https?:\/\//.test(url)) {
    throw new CliError(ExitCode.FAILURE, "the start reply carried no usable url and expires_at");
  }
  return { url, expiresAt };
}

/** Calls the start endpoint until it yields a link to poll: a new one, or the stored in-flight one. */
async function obtainLink(request: ExportRequest, io: ExportIo): Promise<StoredLink> {
  const { databaseId, baseUrl, token, noWait } = request;
  const endpoint = `${baseUrl}/api/v1/dbs/${encodeURIComponent(databaseId)}/export`;
  let failures = 0;
  for (;;) {
    let res: Response;
    try {
      res = await io.fetch(endpoint, { method: "POST", headers: { Authorization: `Bearer ${token}` } });
    } catch (error) {
      failures++;
      if (failures >= MAX_NETWORK_ATTEMPTS) {
        throw new CliError(ExitCode.NETWORK, `could not reach ${baseUrl} (${describeNetworkError(error)})`);
      }
      const seconds = networkBackoffSeconds(failures);
      io.reporter.phase(`could not reach the server (${describeNetworkError(error)}), retrying in ${seconds} s`);
      await io.sleep(seconds * 1000);
      continue;
    }
    failures = 0;
    const { reply, body } = await readReply(res, io.now());
    const stored = io.store.load(databaseId, baseUrl);
    const decision = decideStart(reply, { databaseId, hasStoredLink: stored !== undefined, noWait });
    switch (decision.action) {
      case "download": {
        const link = linkFromStartReply(body);
        try {
          io.store.save(databaseId, link);
        } catch (error) {
          // The export has started: not being able to remember its link must not lose it.
          io.reporter.phase(`could not store the link (${(error as NodeJS.ErrnoException).code ?? error}); continuing without it`);
        }
        io.reporter.phase(`export ${exportIdOf(link.url) ?? ""} started; its link is valid until ${link.expiresAt}`);
        return link;
      }
      case "poll-stored-link":
        io.reporter.phase(decision.message);
        return stored!;
      case "wait":
        io.reporter.phase(decision.message);
        await io.sleep(decision.seconds * 1000);
        continue;
      case "stop":
        throw decision.error;
    }
  }
}

/** Runs one export end to end; throws CliError with the exit code on failure. */
export async function runExport(request: ExportRequest, io: ExportIo): Promise<ExportResult> {
  const link = await obtainLink(request, io);
  try {
    const saved = await downloadArchive(
      { url: link.url, databaseId: request.databaseId, output: request.output, directory: io.directory },
      io,
    );
    io.store.forget(request.databaseId);
    const exportId = exportIdOf(link.url);
    return { ...saved, databaseId: request.databaseId, ...(exportId ? { exportId } : {}) };
  } catch (error) {
    if (error instanceof CliError && DEAD_LINK.has(error.exitCode)) io.store.forget(request.databaseId);
    throw error;
  }
}
