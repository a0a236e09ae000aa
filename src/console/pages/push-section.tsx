import type { AppView } from "../../apps/views";
import { Csrf, Field } from "./components";

/** What the section shows besides the app: the token field's error, and a secret just made (shown this once). */
export interface PushSectionState {
  tokenError?: string;
  secret?: string;
}

/**
 * The app page's "Private repository and deploy on push" section: the forge access token (a
 * password field; once saved it is never shown again, only that one is saved) and the webhook
 * address with its secret, made or replaced by `New secret` and shown only in that reply.
 */
export function PushSection(props: { app: AppView; csrfToken: string; state?: PushSectionState }) {
  const { app, csrfToken } = props;
  const state = props.state ?? {};
  return (
    <section class="card" id="push" aria-labelledby="push-heading">
      <h2 id="push-heading">Private repository and deploy on push</h2>
      <h3>Access token</h3>
      <p class="lead">
        {app.source_token_set
          ? "An access token is saved. It is sent only to the repository's forge and never shown again; saving another replaces it."
          : "For a private repository, save a forge access token that can read it (a GitHub fine-grained token with Contents: read, a GitLab token with read_repository, or a Gitea token)."}
      </p>
      <form method="post" action={`/console/apps/${app.id}/source-token`} class="form-card" novalidate>
        <Csrf token={csrfToken} />
        <Field name="source_token" label="Access token" type="password" autocomplete="off" error={state.tokenError} hint="Used from the next deploy." />
        <button type="submit">Save token</button>
      </form>
      {app.source_token_set && (
        <form method="post" action={`/console/apps/${app.id}/source-token/remove`}>
          <Csrf token={csrfToken} />
          <button type="submit" class="secondary">
            Remove token
          </button>
        </form>
      )}
      <h3>Deploy on push</h3>
      <p class="lead">
        Add this webhook to the repository (content type JSON, push events). A push to branch <code>{app.branch}</code> deploys it, as Deploy does, once the first
        Deploy has been pressed here.
      </p>
      <p>
        Webhook URL: <code data-webhook-url="">{app.webhook.url}</code>
      </p>
      {state.secret ? (
        <div class="alert" role="status" data-webhook-secret="">
          <p>
            Secret (shown this once): <code>{state.secret}</code>
          </p>
          <p>Paste it as the webhook's secret (GitLab: its secret token). The previous secret no longer works.</p>
        </div>
      ) : (
        <p class="muted">{app.webhook.secret_set ? "A secret is set; it is not shown again. A new one replaces it." : "No secret yet: make one to turn deploy on push on."}</p>
      )}
      <form method="post" action={`/console/apps/${app.id}/webhook/rotate`}>
        <Csrf token={csrfToken} />
        <button type="submit" class="secondary">
          {app.webhook.secret_set ? "New secret" : "Make secret"}
        </button>
      </form>
    </section>
  );
}
