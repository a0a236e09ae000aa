import { type Context, Hono } from "hono";
import type { AppEnv } from "../../http/context";
import { DatabaseName, type DatabaseView, SqlRequest, createDatabase, deleteDatabase, listDatabases, ownedDatabase, runSql } from "../actions/databases";
import { listRecentExports } from "../actions/exports";
import { Csrf, DateTime, EmptyState, Field } from "./components";
import { ExportsSection } from "./exports-section";
import { setFlash, takeFlash, type Flash } from "./flash";
import { type FieldErrors, readForm } from "./forms";
import { Layout, loadViewer, render, type Viewer } from "./layout";
import { SqlConsole, type SqlOutcome } from "./sql-console";

function DatabaseList(props: { viewer: Viewer; databases: DatabaseView[]; flash?: Flash | null; name?: string; errors?: FieldErrors }) {
  return (
    <Layout title="Databases" viewer={props.viewer} section="databases" flash={props.flash}>
      <h1>Databases</h1>
      <p class="lead">Managed SQLite databases. Open one to run SQL and export it.</p>
      <section class="card" aria-labelledby="create-heading">
        <h2 id="create-heading">Create a database</h2>
        <form method="post" action="/console/databases" class="inline-form" novalidate>
          <Csrf token={props.viewer.csrfToken} />
          <Field name="name" label="Database name" value={props.name} error={props.errors?.name} maxlength={64} required />
          <div class="actions">
            <button type="submit">Create database</button>
          </div>
        </form>
      </section>
      <section class="card" aria-labelledby="list-heading">
        <h2 id="list-heading">Your databases</h2>
        {props.databases.length === 0 ? (
          <EmptyState title="No databases yet">
            Create one above by giving it a name. You can then fill it from the SQL console and export it.
          </EmptyState>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">ID</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {props.databases.map((db) => (
                  <tr>
                    <td>
                      <a href={`/console/databases/${db.id}`}>{db.name}</a>
                    </td>
                    <td>
                      <code>{db.id}</code>
                    </td>
                    <td>
                      <DateTime iso={db.created_at} locale={props.viewer.locale} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </Layout>
  );
}

interface DatabaseProps {
  viewer: Viewer;
  db: DatabaseView;
  exports: Awaited<ReturnType<typeof listRecentExports>>;
  flash?: Flash | null;
  sql?: string;
  outcome?: SqlOutcome;
}

function DatabasePage(props: DatabaseProps) {
  const { db, viewer } = props;
  return (
    <Layout title={db.name} viewer={viewer} section="databases" flash={props.flash}>
      <p class="crumbs">
        <a href="/console/databases">Databases</a> / {db.name}
      </p>
      <h1>{db.name}</h1>
      <div class="meta">
        <span>
          ID <code>{db.id}</code>
        </span>
        <span>
          Created <DateTime iso={db.created_at} locale={viewer.locale} />
        </span>
      </div>
      <SqlConsole databaseId={db.id} csrfToken={viewer.csrfToken} sql={props.sql} outcome={props.outcome} />
      <ExportsSection databaseId={db.id} exports={props.exports} locale={viewer.locale} csrfToken={viewer.csrfToken} flash={props.flash} />
      <section class="card danger-zone" aria-labelledby="delete-heading">
        <h2 id="delete-heading">Delete this database</h2>
        <p>Its data, its exports and their archives are removed for good.</p>
        <a class="button danger" href={`/console/databases/${db.id}/delete`}>
          Delete database…
        </a>
      </section>
    </Layout>
  );
}

function DeletePage(props: { viewer: Viewer; db: DatabaseView }) {
  return (
    <Layout title={`Delete ${props.db.name}`} viewer={props.viewer} section="databases">
      <div class="card narrow">
        <h1>Delete “{props.db.name}”?</h1>
        <p>
          This removes the database <strong>{props.db.name}</strong> (<code>{props.db.id}</code>), all its data, its exports
          and their archives. Download links already handed out stop working. This cannot be undone.
        </p>
        <form method="post" action={`/console/databases/${props.db.id}/delete`} class="row-actions">
          <Csrf token={props.viewer.csrfToken} />
          <a class="button secondary" href={`/console/databases/${props.db.id}`}>
            Cancel
          </a>
          <button type="submit" class="danger">
            Delete {props.db.name}
          </button>
        </form>
      </div>
    </Layout>
  );
}

async function databasePage(c: Context<AppEnv>, id: string) {
  const db = await ownedDatabase(c, id);
  return { db, exports: await listRecentExports(c, db.id), viewer: await loadViewer(c) };
}

async function listPage(c: Context<AppEnv>, extra: { flash?: Flash | null; name?: string; errors?: FieldErrors }, status: 200 | 400 = 200) {
  const databases = await listDatabases(c);
  return render(c, <DatabaseList viewer={await loadViewer(c)} databases={databases} {...extra} />, status);
}

/** Databases: list and create, a database's page (SQL console, exports), delete with confirmation. */
export const databasePages = new Hono<AppEnv>()
  .get("/", async (c) => listPage(c, { flash: await takeFlash(c) }))
  .post("/", async (c) => {
    const form = await readForm(c, DatabaseName);
    if (!form.ok) return listPage(c, { name: form.values.name, errors: form.errors }, 400);
    const created = await createDatabase(c, form.data.name);
    await setFlash(c, { notice: `Database “${created.name}” created. Run SQL below to fill it.` });
    return c.redirect(`/console/databases/${created.id}`, 303);
  })
  .get("/:id", async (c) => {
    const flash = await takeFlash(c);
    return render(c, <DatabasePage {...await databasePage(c, c.req.param("id"))} flash={flash} />);
  })
  .post("/:id/sql", async (c) => {
    const page = await databasePage(c, c.req.param("id"));
    const form = await readForm(c, SqlRequest.pick({ sql: true }));
    if (!form.ok) return render(c, <DatabasePage {...page} sql={form.values.sql} outcome={{ error: form.errors.sql ?? "Enter SQL to run." }} />, 400);
    const outcome = await runSql(c, page.db, form.data);
    if (!outcome.ok) return render(c, <DatabasePage {...page} sql={form.data.sql} outcome={{ error: outcome.message }} />, 400);
    return render(c, <DatabasePage {...page} sql={form.data.sql} outcome={{ results: outcome.results }} />);
  })
  .get("/:id/delete", async (c) => render(c, <DeletePage viewer={await loadViewer(c)} db={await ownedDatabase(c, c.req.param("id"))} />))
  .post("/:id/delete", async (c) => {
    const deleted = await deleteDatabase(c, c.req.param("id"));
    await setFlash(c, { notice: `Database “${deleted.name}” deleted.` });
    return c.redirect("/console/databases", 303);
  });
