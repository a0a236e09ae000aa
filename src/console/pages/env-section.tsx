import type { AppView } from "../../apps/views";
import type { EnvDiff, PasteMode } from "../../envvars/diff";
import { REPLACE_WORD } from "../../envvars/diff";
import { type EnvVariable, type RowError, VALUE_TOO_LARGE_MESSAGE } from "../../envvars/rules";
import { Csrf, FieldError } from "./components";
import type { Flash } from "./flash";
import { FlashMessages, Layout, type Viewer } from "./layout";

/**
 * The `Environment` tab of an app (issue 14): one row per variable (key, value, Remove),
 * `Add variable`, and a paste box with merge or replace that leads to a preview before anything
 * is saved. Plain forms: without script, Add variable and the preview are server round trips.
 */

/** The rows form as shown: the saved set, or what was typed with each row's messages. */
export interface EnvRowsForm {
  version: number;
  rows: EnvVariable[];
  /** Messages by row index of `rows`. */
  errors?: Record<number, string[]>;
}

/** The paste box as typed, with the lines that cannot be used. */
export interface EnvPasteForm {
  text: string;
  mode: PasteMode;
  errors?: RowError[];
}

/** HTML drops one line break right after `<textarea>`: one is added so a value starting with a line break keeps it. */
const textareaText = (text: string) => `\n${text}`;

export const envPath = (appId: string) => `/console/apps/${appId}/env`;

/**
 * A save whose new instance failed its check: the running instance keeps the previous set. Shown
 * where the variables are edited and on the app's Overview.
 */
export function EnvFailurePanel(props: { app: AppView; level?: 2 | 3 }) {
  const failure = props.app.env.failure;
  if (!failure) return null;
  const Heading = props.level === 2 ? "h2" : "h3";
  return (
    <section class="failure-panel" aria-labelledby="env-failure-heading" data-env-failure="">
      <Heading id="env-failure-heading">The running instance still has the previous set of variables</Heading>
      <p class="failure-message">{failure.message}</p>
      <p>The saved variables are kept; the app keeps serving with the previous set. A Redeploy starts it with the saved ones.</p>
      {failure.log && (
        <details>
          <summary>Log of the failed check</summary>
          <pre class="log">{failure.log}</pre>
        </details>
      )}
    </section>
  );
}

/** What the running instance has, said where the variables are edited; a save being applied comes before an earlier failure. */
function EnvState(props: { app: AppView }) {
  const { app } = props;
  const { env } = app;
  if (env.applying) {
    return (
      <p class="hint" data-env-applying="">
        A new instance with the saved variables is starting. The running instance keeps the previous set until the new one answers.{" "}
        <a href={`/console/apps/${app.id}/environment`}>Refresh</a>
      </p>
    );
  }
  if (env.failure) return <EnvFailurePanel app={app} />;
  if (app.status === "not_deployed" || app.status === "failed") return <p class="hint">Saved variables are used from the first deploy.</p>;
  if (env.version > env.applied_version) return <p class="hint">The saved variables are used when the app next starts.</p>;
  return <p class="hint">Saving a change starts a new instance with the new variables; traffic switches once it answers.</p>;
}

function RowField(props: { index: number; row: EnvVariable; messages: string[] }) {
  const { index, row, messages } = props;
  const errorId = `env-row-${index}-error`;
  const errorShown = messages.length > 0 ? errorId : undefined;
  const valueInvalid = messages.includes(VALUE_TOO_LARGE_MESSAGE) ? "true" : undefined;
  const keyInvalid = messages.some((m) => m !== VALUE_TOO_LARGE_MESSAGE) ? "true" : undefined;
  return (
    <fieldset class="env-row" data-env-row={index}>
      <legend class="visually-hidden">Variable {index + 1}</legend>
      <div class="field">
        <label for={`env-key-${index}`}>Key</label>
        <input id={`env-key-${index}`} name={`key_${index}`} type="text" value={row.key} class="mono" autocomplete="off" spellcheck={false} aria-invalid={keyInvalid} aria-describedby={errorShown} />
      </div>
      <div class="field">
        <label for={`env-value-${index}`}>Value</label>
        <textarea id={`env-value-${index}`} name={`value_${index}`} rows={1} autocomplete="off" spellcheck={false} aria-invalid={valueInvalid} aria-describedby={errorShown}>
          {textareaText(row.value)}
        </textarea>
      </div>
      <label class="env-remove">
        <input type="checkbox" name={`remove_${index}`} value="1" /> Remove
      </label>
      {messages.length > 0 && (
        <ul class="field-error env-row-errors" id={errorId}>
          {messages.map((m) => (
            <li>{m}</li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}

export function EnvSection(props: { app: AppView; csrfToken: string; rows: EnvRowsForm; paste?: EnvPasteForm; flash?: Flash | null }) {
  const { app, csrfToken, rows } = props;
  return (
    <section class="card" id="environment" aria-labelledby="environment-heading">
      <h2 id="environment-heading">Environment</h2>
      {props.flash?.section === "environment" && <FlashMessages flash={props.flash} />}
      <EnvState app={app} />
      <RowsForm appId={app.id} csrfToken={csrfToken} rows={rows} />
      <PasteForm appId={app.id} csrfToken={csrfToken} version={rows.version} paste={props.paste ?? { text: "", mode: "merge" as PasteMode }} />
    </section>
  );
}

/** The variables as rows, each with its messages; Add variable and Save variables. */
function RowsForm(props: { appId: string; csrfToken: string; rows: EnvRowsForm }) {
  const { rows, csrfToken } = props;
  const shown = rows.rows.length > 0 ? rows.rows : [{ key: "", value: "" }];
  return (
    <form method="post" action={envPath(props.appId)} class="form-card env-rows" novalidate>
      <Csrf token={csrfToken} />
      <input type="hidden" name="version" value={String(rows.version)} />
      <input type="hidden" name="rows" value={String(shown.length)} />
      {shown.map((row, index) => (
        <RowField index={index} row={row} messages={rows.errors?.[index] ?? []} />
      ))}
      <p class="hint">Keys use uppercase letters, digits and underscores. PORT, PATH, HOME, HOSTNAME and USER are set by the platform. A value holds up to 64 KiB.</p>
      <div class="row-actions">
        <button type="submit" name="action" value="add" class="secondary">
          Add variable
        </button>
        <button type="submit" name="action" value="save">
          Save variables
        </button>
      </div>
    </form>
  );
}

/** The paste box: `KEY=value` lines, merge or replace, and Preview. */
function PasteForm(props: { appId: string; csrfToken: string; version: number; paste: EnvPasteForm }) {
  const { paste, csrfToken } = props;
  return (
    <form method="post" action={`${envPath(props.appId)}/paste`} class="form-card env-paste" novalidate>
      <Csrf token={csrfToken} />
      <input type="hidden" name="version" value={String(props.version)} />
      <div class="field">
        <label for="env-paste-text">Paste variables</label>
        <textarea id="env-paste-text" name="text" rows={6} class="mono" spellcheck={false} aria-describedby="env-paste-hint" aria-invalid={paste.errors?.length ? "true" : undefined}>
          {textareaText(paste.text)}
        </textarea>
        <p class="hint" id="env-paste-hint">
          One KEY=value per line, as in a .env file. Lines starting with # are dropped; a -----BEGIN … -----END block is one value.
        </p>
        {paste.errors && paste.errors.length > 0 && (
          <ul class="field-error env-paste-errors" id="env-paste-errors">
            {paste.errors.map((e) =>
              e.key ? (
                e.messages.map((m) => <li>{`Line ${e.row} (${e.key}): ${m}`}</li>)
              ) : (
                e.messages.map((m) => <li>{m}</li>)
              ),
            )}
          </ul>
        )}
      </div>
      <fieldset class="plans">
        <legend>Mode</legend>
        <label>
          <input type="radio" name="mode" value="merge" checked={paste.mode === "merge"} /> Merge: keep variables absent from the pasted text
        </label>
        <label>
          <input type="radio" name="mode" value="replace" checked={paste.mode === "replace"} /> Replace: delete variables absent from the pasted text
        </label>
      </fieldset>
      <button type="submit" class="secondary">
        Preview
      </button>
    </form>
  );
}

function KeyList(props: { title: string; keys: string[]; kind: keyof EnvDiff }) {
  return (
    <div data-diff={props.kind}>
      <h3>
        {props.title} ({props.keys.length})
      </h3>
      {props.keys.length === 0 ? (
        <p class="muted">None</p>
      ) : (
        <ul>
          {props.keys.map((k) => (
            <li>
              <code>{k}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * The preview of a paste: what it adds, changes, removes and leaves unchanged. Replace deleting
 * variables lists them and asks for the word REPLACE. Saving posts the same text again, so what is
 * saved is exactly what was previewed (against the version it was previewed on).
 */
export function EnvPreviewPage(props: { viewer: Viewer; app: AppView; version: number; paste: EnvPasteForm; diff: EnvDiff; confirmError?: string }) {
  const { app, diff, paste } = props;
  const deleting = paste.mode === "replace" && diff.removed.length > 0;
  return (
    <Layout title={`Review variables for ${app.name}`} viewer={props.viewer} section="apps">
      <p class="crumbs">
        <a href="/console/apps">Apps</a> / <a href={`/console/apps/${app.id}`}>{app.name}</a> / Environment
      </p>
      <div class="card">
        <h1>Review the pasted variables</h1>
        <p class="lead">{paste.mode === "replace" ? "Replace mode: variables absent from the pasted text are deleted." : "Merge mode: variables absent from the pasted text are kept."}</p>
        <KeyList title="Added" keys={diff.added} kind="added" />
        <KeyList title="Changed" keys={diff.changed} kind="changed" />
        <KeyList title="Removed" keys={diff.removed} kind="removed" />
        <KeyList title="Unchanged" keys={diff.unchanged} kind="unchanged" />
        <form method="post" action={`${envPath(app.id)}/paste`} class="form-card" novalidate>
          <Csrf token={props.viewer.csrfToken} />
          <input type="hidden" name="step" value="save" />
          <input type="hidden" name="version" value={String(props.version)} />
          <input type="hidden" name="mode" value={paste.mode} />
          <input type="hidden" name="text" value={paste.text} />
          {deleting && (
            <div class="field">
              <p>
                Replace deletes {diff.removed.length === 1 ? "this variable" : `these ${diff.removed.length} variables`}:{" "}
                {diff.removed.map((k, i) => (
                  <>
                    {i > 0 && ", "}
                    <code>{k}</code>
                  </>
                ))}
              </p>
              <label for="f-confirm">Type {REPLACE_WORD} to delete them</label>
              <input id="f-confirm" name="confirm" type="text" autocomplete="off" value="" aria-invalid={props.confirmError ? "true" : undefined} aria-describedby={props.confirmError ? "f-confirm-error" : undefined} autofocus={Boolean(props.confirmError)} />
              <FieldError id="f-confirm-error" message={props.confirmError} />
            </div>
          )}
          <div class="row-actions">
            <a class="button secondary" href={`/console/apps/${app.id}/environment`}>
              Cancel
            </a>
            <button type="submit" class={deleting ? "danger" : undefined}>
              Save variables
            </button>
          </div>
        </form>
      </div>
    </Layout>
  );
}
