import { Hono } from "hono";
import type { ExportStatus } from "../../db/schema";
import { IN_FLIGHT } from "../../exports/export-state";
import type { AppEnv } from "../../http/context";
import { type ExportRowView, exportDownload, ownedExports, startDatabaseExport } from "../actions/exports";
import { Bytes, Csrf, DateTime, EmptyState, StatusBadge } from "./components";
import { type Flash, setFlash } from "./flash";
import { describeWait, shortDigest } from "./format";
import { FlashMessages, render, viewerLocale } from "./layout";

function Digest(props: { sha256: string | null }) {
  if (!props.sha256) return <span>—</span>;
  return (
    <details class="digest">
      <summary>
        <code>{shortDigest(props.sha256)}</code>
      </summary>
      <code data-sha256={props.sha256}>{props.sha256}</code>
    </details>
  );
}

function ExportTable(props: { databaseId: string; exports: ExportRowView[]; locale: string }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Started</th>
            <th scope="col">Finished</th>
            <th scope="col">Size</th>
            <th scope="col">SHA-256</th>
            <th scope="col">
              <span class="visually-hidden">Download</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.exports.map((e) => (
            <tr data-export-id={e.id}>
              <td>
                <StatusBadge status={e.status} />
              </td>
              <td>
                <DateTime iso={e.created_at} locale={props.locale} />
              </td>
              <td>
                <DateTime iso={e.finished_at} locale={props.locale} never="—" />
              </td>
              <td>
                <Bytes bytes={e.size_bytes} />
              </td>
              <td>
                <Digest sha256={e.sha256} />
              </td>
              <td class="actions-cell">
                {e.status === "ready" && (
                  <a class="button small" href={`/console/databases/${props.databaseId}/exports/${e.id}/download`}>
                    Download
                  </a>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The exports list, refreshed in place by the console script while one is being prepared. */
export function ExportsLive(props: { databaseId: string; exports: ExportRowView[]; locale: string }) {
  const preparing = props.exports.some((e) => IN_FLIGHT.has(e.status));
  return (
    <div id="exports-live" data-live-src={`/console/databases/${props.databaseId}/exports/live`}>
      {props.exports.length === 0 ? (
        <EmptyState title="No exports yet">
          Start an export to get a downloadable gzip SQL archive of this database. Scripts can do the same with an API
          token.
        </EmptyState>
      ) : (
        <ExportTable {...props} />
      )}
      {preparing && (
        <p class="hint" data-refresh-link="">
          An export is being prepared. <a href={`/console/databases/${props.databaseId}#exports`}>Refresh</a> to see
          when it is ready.
        </p>
      )}
    </div>
  );
}

/** The Exports card of a database page. */
export function ExportsSection(props: {
  databaseId: string;
  exports: ExportRowView[];
  locale: string;
  csrfToken: string;
  flash?: Flash | null;
}) {
  return (
    <section class="card" id="exports" aria-labelledby="exports-heading">
      <div class="section-head">
        <h2 id="exports-heading">Exports</h2>
        <form method="post" action={`/console/databases/${props.databaseId}/exports`}>
          <Csrf token={props.csrfToken} />
          <button type="submit">Start export</button>
        </form>
      </div>
      {props.flash?.section === "exports" && <FlashMessages flash={props.flash} />}
      <ExportsLive databaseId={props.databaseId} exports={props.exports} locale={props.locale} />
      <p class="visually-hidden" role="status" data-live-announce=""></p>
    </section>
  );
}

const NOT_DOWNLOADABLE: Record<Exclude<ExportStatus, "ready">, string> = {
  pending: "This export is still being prepared. It can be downloaded once it shows as Ready.",
  running: "This export is still being prepared. It can be downloaded once it shows as Ready.",
  failed: "This export failed and has no archive. Start a new export.",
  expired: "This export's archive is past its retention time and has been removed. Start a new export.",
};

/** The flash a start leaves on the database page, per answer of the gate. */
function startFlash(result: Awaited<ReturnType<typeof startDatabaseExport>>["result"]): Flash {
  switch (result.outcome) {
    case "started":
      return { section: "exports", notice: "Export started. It shows as Ready below once its archive can be downloaded." };
    case "export_in_flight":
      return {
        section: "exports",
        error: `An export of this database is already being prepared. Wait ${describeWait(result.retryAfterSeconds)} and look below; it shows as Ready when it can be downloaded.`,
      };
    case "cooldown_active":
      return { section: "exports", error: `This database was exported recently. You can start the next export in ${describeWait(result.retryAfterSeconds)}.` };
    case "not_queued":
      return { section: "exports", error: "The export could not be queued. Nothing was started; try again." };
  }
}

/** Start an export, poll the list, download a ready one. */
export const exportPages = new Hono<AppEnv>()
  .post("/:id/exports", async (c) => {
    const { databaseId, result } = await startDatabaseExport(c, c.req.param("id"));
    await setFlash(c, startFlash(result));
    return c.redirect(`/console/databases/${databaseId}#exports`, 303);
  })
  .get("/:id/exports/live", async (c) => {
    const { databaseId, exports } = await ownedExports(c, c.req.param("id"));
    return render(c, <ExportsLive databaseId={databaseId} exports={exports} locale={viewerLocale(c)} />);
  })
  .get("/:id/exports/:eid/download", async (c) => {
    const download = await exportDownload(c, c.req.param("id"), c.req.param("eid"));
    if (!download.ready) {
      await setFlash(c, { section: "exports", error: NOT_DOWNLOADABLE[download.status] });
      return c.redirect(`/console/databases/${download.databaseId}#exports`, 303);
    }
    c.header("Cache-Control", "no-store");
    return c.redirect(download.url, 303);
  });
