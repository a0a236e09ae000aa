import { type Context, Hono } from "hono";
import type { AppEnv } from "../../http/context";
import { EVENT_NAMES, EVENT_TITLES } from "../../notifications/events";
import { CHANNEL_KINDS } from "../../notifications/formats";
import { type ChannelView, ChannelRequest, type DeliveryView, addChannel, deleteChannel, listChannels, listDeliveries, testChannel } from "../actions/notifications";
import { refusalFields } from "../actions/outcome";
import { Csrf, DateTime, EmptyState, FieldError } from "./components";
import { type Flash, setFlash, takeFlash } from "./flash";
import { type FieldErrors, fieldErrors } from "./forms";
import { Layout, type Viewer, loadViewer, render } from "./layout";

/**
 * The Notifications page (docs/alerts.md): the account's channels (add: kind, address, events;
 * send a test; delete), a new webhook's secret shown once, and the last deliveries. Plain forms
 * with the CSRF field, over the same actions as the JSON routes (actions/notifications.ts).
 */

const KIND_LABELS: Record<(typeof CHANNEL_KINDS)[number], string> = { webhook: "Webhook (signed JSON)", slack: "Slack incoming webhook", discord: "Discord webhook" };
const STATUS_BADGE: Record<string, string> = { delivered: "ready", pending: "pending", failed: "failed" };

interface PageProps {
  viewer: Viewer;
  channels: ChannelView[];
  deliveries: DeliveryView[];
  flash?: Flash | null;
  form?: { kind?: string; url?: string; events?: string[]; errors?: FieldErrors };
}

function NewSecret(props: { secret: NonNullable<Flash["secret"]> }) {
  return (
    <div class="secret" id="new-secret">
      <p>
        <strong>Webhook channel added.</strong> Copy its signing secret now: it will not be shown again. Check each delivery's <code>X-Signature-256</code> with it.
      </p>
      <label for="new-secret-value">Signing secret</label>
      <div class="copy-row">
        <input id="new-secret-value" type="text" readonly value={props.secret.token} autofocus spellcheck={false} autocomplete="off" />
        <button type="button" class="secondary" data-copy="new-secret-value" hidden>
          Copy
        </button>
      </div>
    </div>
  );
}

function AddForm(props: { viewer: Viewer; form?: PageProps["form"] }) {
  const errors = props.form?.errors ?? {};
  const chosen = new Set(props.form?.events ?? ["deploy.failed", "app.crashed"]);
  return (
    <form method="post" action="/console/notifications/channels" novalidate>
      <Csrf token={props.viewer.csrfToken} />
      <div class="field">
        <label for="f-kind">Kind</label>
        <select id="f-kind" name="kind" aria-invalid={errors.kind ? "true" : undefined} aria-describedby={errors.kind ? "f-kind-error" : undefined}>
          {CHANNEL_KINDS.map((kind) => (
            <option value={kind} selected={kind === (props.form?.kind ?? "webhook")}>
              {KIND_LABELS[kind]}
            </option>
          ))}
        </select>
        <FieldError id="f-kind-error" message={errors.kind} />
      </div>
      <div class="field">
        <label for="f-url">Address</label>
        <input id="f-url" name="url" type="text" inputmode="url" autocomplete="off" spellcheck={false} value={props.form?.url ?? ""} maxlength={2048} required autofocus={Boolean(errors.url)} aria-invalid={errors.url ? "true" : undefined} aria-describedby={`f-url-hint${errors.url ? " f-url-error" : ""}`} />
        <p class="hint" id="f-url-hint">
          An https:// address: your receiver, or the incoming-webhook address Slack or Discord gave you.
        </p>
        <FieldError id="f-url-error" message={errors.url} />
      </div>
      <fieldset class="plans" aria-describedby={errors.events ? "f-events-error" : undefined}>
        <legend>Events</legend>
        {EVENT_NAMES.map((event) => (
          <div>
            <label class="plan-option">
              <input type="checkbox" name="events" value={event} checked={chosen.has(event)} />
              <span>
                <code>{event}</code>: {EVENT_TITLES[event]}
              </span>
            </label>
          </div>
        ))}
        <FieldError id="f-events-error" message={errors.events} />
      </fieldset>
      <div class="actions">
        <button type="submit">Add channel</button>
      </div>
    </form>
  );
}

/**
 * A channel's address as the table shows it: host and path, cut to 40 characters (a Slack or
 * Discord address ends in its token, which need not sit on the screen).
 */
export function shortAddress(url: string): string {
  const { host, pathname } = new URL(url);
  const text = `${host}${pathname === "/" ? "" : pathname}`;
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

function ChannelTable(props: { viewer: Viewer; channels: ChannelView[] }) {
  if (props.channels.length === 0) return <EmptyState title="No channels yet">Add one above to hear about failed deploys and crashes where your team looks.</EmptyState>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Kind</th>
            <th scope="col">Address</th>
            <th scope="col">Events</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.channels.map((ch) => (
            <tr data-channel-id={ch.id}>
              <td>{ch.kind}</td>
              <td>
                <code>{shortAddress(ch.url)}</code>
              </td>
              <td>{ch.events.join(", ")}</td>
              <td>
                <DateTime iso={ch.created_at} locale={props.viewer.locale} />
              </td>
              <td class="actions-cell">
                <form method="post" action={`/console/notifications/channels/${ch.id}/test`}>
                  <Csrf token={props.viewer.csrfToken} />
                  <button type="submit" class="secondary small" aria-label={`Send test to the ${ch.kind} channel ${shortAddress(ch.url)}`}>
                    Send test
                  </button>
                </form>
                <form method="post" action={`/console/notifications/channels/${ch.id}/delete`}>
                  <Csrf token={props.viewer.csrfToken} />
                  <button type="submit" class="danger small" aria-label={`Delete the ${ch.kind} channel ${shortAddress(ch.url)}`}>
                    Delete
                  </button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DeliveryTable(props: { viewer: Viewer; deliveries: DeliveryView[]; channels: ChannelView[] }) {
  if (props.deliveries.length === 0) return <EmptyState title="Nothing sent yet">Each event sent to a channel appears here with the receiver's answer.</EmptyState>;
  const kinds = new Map(props.channels.map((c) => [c.id, c.kind]));
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Raised</th>
            <th scope="col">Event</th>
            <th scope="col">Channel</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              HTTP
            </th>
            <th scope="col" class="num">
              Tries
            </th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {props.deliveries.map((d) => (
            <tr data-delivery-id={d.id}>
              <td>
                <DateTime iso={d.created_at} locale={props.viewer.locale} />
              </td>
              <td>
                <code>{d.event}</code>
              </td>
              <td>{kinds.get(d.channel_id) ?? <span class="muted">deleted</span>}</td>
              <td>
                <span class={`badge ${STATUS_BADGE[d.status] ?? "expired"}`} data-status={d.status}>
                  {d.status}
                </span>
              </td>
              <td class="num">{d.status_code ?? "—"}</td>
              <td class="num">{d.attempts}</td>
              <td>{d.error ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function NotificationsPage(props: PageProps) {
  return (
    <Layout title="Notifications" viewer={props.viewer} section="notifications" flash={props.flash}>
      <h1>Notifications</h1>
      <p class="lead">Send your apps' events (a failed deploy, a crash, memory or errors running high, a low wallet) to a webhook, Slack or Discord. Each incident is sent once.</p>
      <section class="card" aria-labelledby="add-heading">
        <h2 id="add-heading">Add a channel</h2>
        {props.flash?.secret && <NewSecret secret={props.flash.secret} />}
        <AddForm viewer={props.viewer} form={props.form} />
      </section>
      <section class="card" aria-labelledby="channels-heading">
        <h2 id="channels-heading">Channels</h2>
        <ChannelTable viewer={props.viewer} channels={props.channels} />
      </section>
      <section class="card" aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">Recent deliveries</h2>
        <DeliveryTable viewer={props.viewer} deliveries={props.deliveries} channels={props.channels} />
      </section>
    </Layout>
  );
}

async function page(c: Context<AppEnv>, extra: Partial<PageProps>, status: 200 | 400 = 200) {
  const [channels, deliveries, viewer] = await Promise.all([listChannels(c), listDeliveries(c, 20), loadViewer(c)]);
  return render(c, <NotificationsPage viewer={viewer} channels={channels} deliveries={deliveries} {...extra} />, status);
}

/** The add form as sent: text fields, and every ticked event. */
async function readChannelForm(c: Context<AppEnv>) {
  const body = await c.req.parseBody({ all: true });
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const events = ([] as unknown[]).concat(body.events ?? []).filter((e): e is string => typeof e === "string");
  return { kind: text(body.kind), url: text(body.url), events };
}

export const notificationPages = new Hono<AppEnv>()
  .get("/", async (c) => page(c, { flash: await takeFlash(c) }))
  .post("/channels", async (c) => {
    const form = await readChannelForm(c);
    const parsed = ChannelRequest.safeParse(form);
    if (!parsed.success) return page(c, { form: { ...form, errors: fieldErrors(parsed.error) } }, 400);
    const outcome = await addChannel(c, parsed.data);
    if (!outcome.ok) return page(c, { form: { ...form, errors: refusalFields(outcome) } }, 400);
    const made = outcome.channel;
    await setFlash(c, made.secret ? { secret: { name: made.url, token: made.secret } } : { notice: `The ${made.kind} channel was added.` });
    return c.redirect("/console/notifications", 303);
  })
  .post("/channels/:id/test", async (c) => {
    await testChannel(c, c.req.param("id"));
    await setFlash(c, { notice: "A test notification is on its way; its delivery appears below." });
    return c.redirect("/console/notifications", 303);
  })
  .post("/channels/:id/delete", async (c) => {
    const channel = await deleteChannel(c, c.req.param("id"));
    await setFlash(c, { notice: `The ${channel.kind} channel was deleted.` });
    return c.redirect("/console/notifications", 303);
  });
