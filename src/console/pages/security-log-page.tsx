import { Hono } from "hono";
import { AUDIT_ACTIONS } from "../../audit/actions";
import type { AppEnv } from "../../http/context";
import { type AuditEntry, auditPage } from "../actions/audit";
import { DateTime, EmptyState } from "./components";
import { Layout, loadViewer, render, type Viewer } from "./layout";

export const SECURITY_LOG_PATH = "/console/profile/security-log";

type Values = Record<"action" | "resource" | "from" | "to", string>;

interface Props {
  viewer: Viewer;
  values: Values;
  entries: AuditEntry[];
  nextBefore: string | null;
  error?: string;
}

const ACTOR_LABEL: Record<string, string> = { session: "Signed-in session", token: "API token", webhook: "Push webhook", operator: "Operator", visitor: "Not signed in" };

function Filters(props: { values: Values; error?: string }) {
  return (
    <form method="get" action={SECURITY_LOG_PATH} class="filters" aria-describedby={props.error ? "filters-error" : undefined}>
      <div class="field">
        <label for="f-action">Action</label>
        <select id="f-action" name="action">
          <option value="">Any action</option>
          {AUDIT_ACTIONS.map((a) => (
            <option value={a} selected={props.values.action === a}>
              {a}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="f-resource">Resource</label>
        <input id="f-resource" name="resource" type="text" value={props.values.resource} maxlength={255} aria-describedby="f-resource-hint" />
        <p class="hint" id="f-resource-hint">
          An id, or a kind: app, database, domain, token, passkey, session, totp, account, wallet, channel.
        </p>
      </div>
      <div class="field">
        <label for="f-from">From (UTC)</label>
        <input id="f-from" name="from" type="date" value={props.values.from} />
      </div>
      <div class="field">
        <label for="f-to">To (UTC)</label>
        <input id="f-to" name="to" type="date" value={props.values.to} />
      </div>
      <div class="actions">
        <button type="submit">Filter</button>
        <a class="button secondary" href={SECURITY_LOG_PATH}>
          Clear
        </a>
      </div>
      {props.error && (
        <p class="alert" role="alert" id="filters-error">
          {props.error}
        </p>
      )}
    </form>
  );
}

function Outcome(props: { outcome: AuditEntry["outcome"]; code: string | null }) {
  if (props.outcome === "done") return <span class="badge ready">Done</span>;
  return (
    <span class="badge failed">
      Refused <code>{props.code}</code>
    </span>
  );
}

function EntryRow(props: { entry: AuditEntry; locale: string }) {
  const e = props.entry;
  return (
    <tr data-audit-id={e.id} data-action={e.action}>
      <td>
        <DateTime iso={e.at} locale={props.locale} />
      </td>
      <td>
        {ACTOR_LABEL[e.actor.kind] ?? e.actor.kind}
        {e.actor.name && <span class="hint"> {e.actor.name}</span>}
      </td>
      <td>
        {e.address ?? "—"}
        {e.user_agent && <span class="hint ua"> {e.user_agent}</span>}
      </td>
      <td>
        <code>{e.action}</code>
      </td>
      <td>
        {e.resource.kind}
        {e.resource.name && ` “${e.resource.name}”`}
        {e.resource.id && <span class="hint"> {e.resource.id}</span>}
      </td>
      <td>{e.fields.length > 0 ? e.fields.join(", ") : "—"}</td>
      <td>
        <Outcome outcome={e.outcome} code={e.code} />
      </td>
      <td>
        <code class="hint">{e.request_id}</code>
      </td>
    </tr>
  );
}

function SecurityLogPage(props: Props) {
  const older = new URLSearchParams({ ...props.values, before: props.nextBefore ?? "" });
  return (
    <Layout title="Security log" viewer={props.viewer} section="profile">
      <h1>Security log</h1>
      <p class="lead">
        Every change to your account and its resources, newest first: who made it, from where, and whether it was done.
        Values of secrets, passwords, tokens and environment variables are never kept, only the names of what changed.
        Entries are kept for 400 days.
      </p>
      <section class="card" aria-labelledby="filters-heading">
        <h2 id="filters-heading">Filters</h2>
        <Filters values={props.values} error={props.error} />
      </section>
      <section class="card" aria-labelledby="entries-heading">
        <h2 id="entries-heading">Entries</h2>
        {props.entries.length === 0 ? (
          <EmptyState title="No entries">Nothing matches these filters.</EmptyState>
        ) : (
          <div class="table-wrap" tabindex={0} role="region" aria-label="Security log entries, scrolls sideways">
            <table id="audit-entries">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">From</th>
                  <th scope="col">Action</th>
                  <th scope="col">Resource</th>
                  <th scope="col">Fields</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Request id</th>
                </tr>
              </thead>
              <tbody>
                {props.entries.map((e) => (
                  <EntryRow entry={e} locale={props.viewer.locale} />
                ))}
              </tbody>
            </table>
          </div>
        )}
        {props.nextBefore && (
          <p>
            <a href={`${SECURITY_LOG_PATH}?${older}`}>Older entries</a>
          </p>
        )}
      </section>
    </Layout>
  );
}

/** The Security log page under /console/profile: the audit log with its filters. */
export const securityLogPages = new Hono<AppEnv>().get("/security-log", async (c) => {
  const query = c.req.query();
  const values: Values = { action: query.action ?? "", resource: query.resource ?? "", from: query.from ?? "", to: query.to ?? "" };
  const viewer = await loadViewer(c);
  const outcome = await auditPage(c, query);
  if (!outcome.ok) return render(c, <SecurityLogPage viewer={viewer} values={values} entries={[]} nextBefore={null} error={outcome.message} />, 400);
  return render(c, <SecurityLogPage viewer={viewer} values={values} entries={outcome.page.entries} nextBefore={outcome.page.next_before} />);
});
