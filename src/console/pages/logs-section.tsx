import type { Context } from "hono";
import type { AppEnv } from "../../http/context";
import type { LogLine } from "../../runtime/types";
import { callerOf } from "../actions/caller";
import { pageLogLines } from "../actions/logs";

export interface LogsSectionProps {
  appId: string;
  lines: LogLine[];
  /** The search as typed (`?q=&since=&until=` on the app page), when one was made. */
  search: { q: string; since: string; until: string } | null;
  error: string | null;
}

/** The app page's Logs section data: the last lines, or the ones the page's search asks for. */
export async function logsSectionProps(c: Context<AppEnv>, appId: string): Promise<LogsSectionProps> {
  const raw = { q: c.req.query("q") ?? "", since: c.req.query("since") ?? "", until: c.req.query("until") ?? "" };
  const searching = raw.q !== "" || raw.since !== "" || raw.until !== "";
  const { lines, error } = await pageLogLines(callerOf(c), appId, raw);
  return { appId, lines, search: searching || error ? raw : null, error };
}

/** `2026-11-24 00:14:01` in UTC, then `!` for stderr lines. */
export function formatLogLine(line: LogLine): string {
  return `${new Date(line.at).toISOString().slice(0, 19).replace("T", " ")} ${line.stream === "stderr" ? "!" : " "} ${line.text}`;
}

/**
 * The app's runtime output: the console script follows it live (SSE, resumed with the last event
 * id, the gap fetched when the tab is shown again) and searches it through the JSON route; without
 * JavaScript the search form reloads the page with the lines found.
 */
export function LogsSection(props: LogsSectionProps) {
  const { appId, search } = props;
  return (
    <section
      class="card"
      id="logs"
      aria-labelledby="logs-heading"
      data-logs-stream={`/console/api/apps/${appId}/logs/stream`}
      data-logs-search={`/console/api/apps/${appId}/logs`}
      data-searching={search ? "true" : "false"}
    >
      <h2 id="logs-heading">Logs</h2>
      <p class="lead">
        The app's output (the last 10,000 lines are kept). Values of its environment variables are shown as <code>****</code>.
      </p>
      <form method="get" action={`/console/apps/${appId}/logs`} class="inline-form" id="logs-search" role="search">
        <label>
          Search text <input type="search" name="q" value={search?.q ?? ""} maxlength={200} />
        </label>
        <label>
          From (UTC) <input type="datetime-local" name="since" value={search?.since ?? ""} step={1} />
        </label>
        <label>
          To (UTC) <input type="datetime-local" name="until" value={search?.until ?? ""} step={1} />
        </label>
        <button type="submit">Search logs</button>
        <a href={`/console/apps/${appId}/logs`} data-logs-live="" hidden={!search}>
          Back to live logs
        </a>
      </form>
      {props.error && (
        <p class="field-error" role="alert">
          {props.error}
        </p>
      )}
      <p class="muted" id="logs-status" role="status">
        {search ? `${props.lines.length} line${props.lines.length === 1 ? "" : "s"} found.` : props.lines.length === 0 ? "No output yet." : ""}
      </p>
      <pre class="log" id="live-logs" tabindex={0} aria-labelledby="logs-heading">
        {props.lines.map((line) => `${formatLogLine(line)}\n`).join("")}
      </pre>
    </section>
  );
}
