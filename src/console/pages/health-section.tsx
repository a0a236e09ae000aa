import type { AppView } from "../../apps/views";
import { HEALTH_BOUNDS } from "../../apps/health";
import { Csrf, DateTime, Field, FieldError } from "./components";
import type { FieldErrors } from "./forms";

/** The health check form as typed, when it is shown again with its errors. */
export interface HealthForm {
  values: Record<string, string>;
  errors: FieldErrors;
}

const STATE_LABELS = { healthy: "Healthy", unhealthy: "Unhealthy", unknown: "Unknown" } as const;

/** What the periodic checks found, for the facts at the top of the app page (redrawn while a deploy runs). */
export function HealthFact(props: { health: AppView["health"]; locale: string }) {
  const { health } = props;
  return (
    <div>
      <dt>Health</dt>
      <dd data-health-state={health.state}>
        {STATE_LABELS[health.state]}
        {health.last_failure && (
          <span class="muted" data-health-failure="">
            {" "}
            (last failure <DateTime iso={health.last_failure.at} locale={props.locale} />: {health.last_failure.message})
          </span>
        )}
      </dd>
    </div>
  );
}

/**
 * The app's health check settings: the path probed, the answer expected, the timeout and the
 * grace period at start. The deploy probe uses them, and the periodic check every
 * HEALTH_CHECK_INTERVAL_SECONDS restarts the instance after 3 failures in a row.
 */
export function HealthSection(props: { app: AppView; csrfToken: string; form?: HealthForm }) {
  const { app } = props;
  const saved = app.health_check;
  const values = props.form?.values ?? { path: saved.path, expect: saved.expect, timeout_seconds: String(saved.timeout_seconds), grace_seconds: String(saved.grace_seconds) };
  const errors = props.form?.errors ?? {};
  const { timeoutSeconds: t, graceSeconds: g } = HEALTH_BOUNDS;
  return (
    <section class="card" id="health-check" aria-labelledby="health-heading">
      <h2 id="health-heading">Health check</h2>
      <p class="lead">Each new instance must pass it before it takes traffic; after that it is checked regularly, and 3 failures in a row restart it.</p>
      <form method="post" action={`/console/apps/${app.id}/health-check`} class="form-card" novalidate>
        <Csrf token={props.csrfToken} />
        <FieldError id="f-health-form-error" message={errors._form} />
        <Field name="path" label="Path" value={values.path} error={errors.path} maxlength={HEALTH_BOUNDS.pathMaxLength} hint="A path on the app, such as / or /healthz (not a full address). Redirects are not followed." />
        <fieldset class="field">
          <legend>Healthy answer</legend>
          <label>
            <input type="radio" name="expect" value="any" checked={values.expect !== "2xx-3xx"} /> Any HTTP answer
          </label>
          <label>
            <input type="radio" name="expect" value="2xx-3xx" checked={values.expect === "2xx-3xx"} /> Only 2xx or 3xx
          </label>
          <FieldError id="f-expect-error" message={errors.expect} />
        </fieldset>
        <Field name="timeout_seconds" label="Timeout (seconds)" value={values.timeout_seconds} error={errors.timeout_seconds} hint={`How long one check may wait for the answer: ${t.min} to ${t.max}.`} />
        <Field name="grace_seconds" label="Grace period at start (seconds)" value={values.grace_seconds} error={errors.grace_seconds} hint={`Failures this long after the instance starts do not count: ${g.min} to ${g.max}.`} />
        <button type="submit">Save health check</button>
      </form>
    </section>
  );
}
