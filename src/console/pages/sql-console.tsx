import type { SqlOutValue, StatementResult } from "../../databases/managed-database";
import { fromBase64 } from "../../lib/encoding";
import { Csrf, EmptyState, FieldError } from "./components";
import { formatBytes } from "./format";

/** What the SQL console shows after a run: the results of every statement, or the error. */
export type SqlOutcome = { results: StatementResult[] } | { error: string };

/** A value as a cell: NULL and BLOBs are marked so they are not mistaken for text. */
function Cell(props: { value: SqlOutValue }) {
  const v = props.value;
  if (v === null) return <td class="null">NULL</td>;
  if (typeof v === "object") return <td class="null">{`BLOB, ${formatBytes(fromBase64(v.blob).length)}`}</td>;
  return <td>{String(v)}</td>;
}

function Result(props: { result: StatementResult; index: number; count: number }) {
  const { result } = props;
  const label = props.count > 1 ? `Statement ${props.index + 1}: ` : "";
  if (result.columns.length === 0) {
    return (
      <p class="result-note">
        {label}
        {result.rows_written === 1 ? "1 row written." : `${result.rows_written} rows written.`}
      </p>
    );
  }
  return (
    <div class="result">
      <p class="result-note">
        {label}
        {result.rows.length === 1 ? "1 row" : `${result.rows.length} rows`}
        {result.truncated ? " shown; the rest were left out to keep the page small. Add a LIMIT to see a part." : "."}
      </p>
      <div class="table-wrap">
        <table class="results">
          <thead>
            <tr>
              {result.columns.map((col) => (
                <th scope="col">{col}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {result.rows.map((row) => (
              <tr>
                {row.map((value) => (
                  <Cell value={value} />
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

interface SqlConsoleProps {
  databaseId: string;
  csrfToken: string;
  sql?: string;
  outcome?: SqlOutcome;
}

/** The SQL console card: a statement box that posts to the server, and the outcome under it. */
export function SqlConsole(props: SqlConsoleProps) {
  const error = props.outcome && "error" in props.outcome ? props.outcome.error : undefined;
  const results = props.outcome && "results" in props.outcome ? props.outcome.results : undefined;
  return (
    <section class="card" id="sql" aria-labelledby="sql-heading">
      <h2 id="sql-heading">SQL console</h2>
      <form method="post" action={`/console/databases/${props.databaseId}/sql#sql`}>
        <Csrf token={props.csrfToken} />
        <div class="field">
          <label for="f-sql">SQL</label>
          <textarea
            id="f-sql"
            name="sql"
            spellcheck={false}
            autofocus={Boolean(error)}
            aria-invalid={error ? "true" : undefined}
            aria-describedby={error ? "f-sql-hint f-sql-error" : "f-sql-hint"}
            placeholder="CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"
          >
            {props.sql ?? ""}
          </textarea>
          <p class="hint" id="f-sql-hint">
            SQLite. Several statements separated by semicolons run as one transaction: all or nothing.
          </p>
          <FieldError id="f-sql-error" message={error} />
        </div>
        <button type="submit">Run</button>
      </form>
      {results && (
        <div class="results-area" role="status">
          {results.length === 0 ? (
            <EmptyState title="Nothing to show">The statements ran and returned no rows.</EmptyState>
          ) : (
            results.map((result, index) => <Result result={result} index={index} count={results.length} />)
          )}
        </div>
      )}
    </section>
  );
}
