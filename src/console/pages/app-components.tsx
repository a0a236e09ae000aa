import { PLANS, PLAN_IDS, type PlanId } from "../../apps/plans";
import type { AppStatus, DeployStatus } from "../../db/schema";
import { Field, FieldError } from "./components";
import type { FieldErrors } from "./forms";

/** Pieces the app pages share: status badges, the plan choices, the settings fields. */

const APP_STATUS_LABEL: Record<AppStatus, string> = {
  not_deployed: "Not deployed",
  running: "Running",
  stopped: "Stopped",
  failed: "Failed",
};

const DEPLOY_STATUS_LABEL: Record<DeployStatus, string> = {
  building: "Building",
  starting: "Starting",
  live: "Live",
  failed: "Failed",
  superseded: "Superseded",
};

/** An app's status as a coloured badge. */
export function AppStatusBadge(props: { status: AppStatus }) {
  return (
    <span class={`badge app-${props.status}`} data-app-status={props.status}>
      {APP_STATUS_LABEL[props.status]}
    </span>
  );
}

/** A deploy's status as a coloured badge. */
export function DeployStatusBadge(props: { status: DeployStatus }) {
  return (
    <span class={`badge deploy-${props.status}`} data-deploy-status={props.status}>
      {DEPLOY_STATUS_LABEL[props.status]}
    </span>
  );
}

/** The first 8 characters of a deploy id, enough to tell deploys apart in a list. */
export const shortId = (id: string) => id.slice(0, 8);

/** A plan's name as shown (`Lite`); an unknown id is shown as stored. */
export const planLabel = (plan: string) => (plan in PLANS ? PLANS[plan as PlanId].label : plan);

/** What a plan gives and costs: `256 MB memory · 0.25 CPU · 2 GB disk · 1,200 DA per month`. */
export function planSummary(plan: PlanId): string {
  const { memoryMb, cpus, diskGb, priceDa } = PLANS[plan];
  const memory = memoryMb >= 1024 ? `${memoryMb / 1024} GB` : `${memoryMb} MB`;
  return `${memory} memory · ${cpus} CPU · ${diskGb} GB disk · ${priceDa.toLocaleString("en-US")} DA per month`;
}

/** The plans as radio buttons, each naming its limits and monthly price. */
export function PlanChoices(props: { selected: string; error?: string }) {
  return (
    <fieldset class="field plans" aria-describedby={props.error ? "f-plan-error" : undefined}>
      <legend>Plan</legend>
      {PLAN_IDS.map((id) => (
        <label class="plan-option">
          <input type="radio" name="plan" value={id} checked={id === props.selected} />
          <span>
            <strong>{PLANS[id].label}</strong> <span class="muted">{planSummary(id)}</span>
          </span>
        </label>
      ))}
      <FieldError id="f-plan-error" message={props.error} />
    </fieldset>
  );
}

/** The settings of an app as typed (or as stored), by form field name. */
export interface SettingsValues {
  name: string;
  repository: string;
  branch: string;
  root_directory: string;
  dockerfile_path: string;
  subdomain: string;
}

/**
 * The settings fields of the New app form and the app page. `subdomainFixed` shows the subdomain
 * as text with the reason instead of a field (docs/apps.md, Subdomain: changeable until the first deploy).
 */
export function SettingsFields(props: { values: SettingsValues; errors?: FieldErrors; subdomainFixed?: boolean; appsDomain: string }) {
  const { values } = props;
  const errors = props.errors ?? {};
  return (
    <>
      <Field name="name" label="Name" value={values.name} error={errors.name} maxlength={64} required />
      <Field
        name="repository"
        label="Repository"
        value={values.repository}
        error={errors.repository}
        hint="The https address of a git repository, e.g. https://github.com/acme/shop."
        required
      />
      <Field name="branch" label="Branch" value={values.branch} error={errors.branch} hint="Deploys build from this branch." />
      <Field name="root_directory" label="Root directory" value={values.root_directory} error={errors.root_directory} hint="The build context. Blank means the repository root." />
      <Field name="dockerfile_path" label="Dockerfile path" value={values.dockerfile_path} error={errors.dockerfile_path} hint="Relative to the root directory. Blank means Dockerfile." />
      {props.subdomainFixed ? (
        <div class="field">
          <span class="label" id="f-subdomain-label">
            Subdomain
          </span>
          <p class="fixed-value" aria-labelledby="f-subdomain-label">
            <code>{values.subdomain}</code>
          </p>
          <p class="hint">The subdomain is fixed since the app's first deploy.</p>
        </div>
      ) : (
        <Field
          name="subdomain"
          label="Subdomain"
          value={values.subdomain}
          error={errors.subdomain}
          maxlength={63}
          hint={`The app answers at <subdomain>.${props.appsDomain}. Blank gives a generated hostname. 3 to 63 lowercase letters, digits and hyphens; it can be changed until the first deploy.`}
        />
      )}
    </>
  );
}
