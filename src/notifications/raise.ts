import { getConfig } from "../config";
import { describeError, log } from "../http/log";
import { type EventInput, type EventName, buildPayload } from "./events";
import { type IncidentStep, incidentStep } from "./rules";
import { channelsFor, closeIncident, insertDelivery, openIncident, openIncidents } from "./store";

/**
 * Raising an event (docs/alerts.md, "Delivery"): for each of the account's channels that asked
 * for it, one delivery row is written (the outbox; a second raise with the same incident key
 * writes nothing), then one message on the `notifications` queue names the row. The consumer
 * (deliver.ts) sends it; the cron sweep re-queues a row whose message was lost.
 */

export const NOTIFICATIONS_QUEUE = "notifications";

export interface NotificationMessage {
  deliveryId: string;
}

/** The app fields an event names. */
export interface EventApp {
  id: string;
  name: string;
  subdomain: string;
  accountId: string;
}

/** An event about an app. */
export function appEvent(app: EventApp, event: EventName, key: string, at: number, details: Record<string, unknown> = {}): EventInput {
  return { event, accountId: app.accountId, app: { id: app.id, name: app.name, subdomain: app.subdomain }, key, at, details };
}

/** Writes the deliveries of one event and queues them; the number written. */
export async function raiseEvent(env: Env, input: EventInput): Promise<number> {
  const channels = await channelsFor(env, input.accountId, input.event);
  const appsDomain = getConfig(env).APPS_DOMAIN;
  let written = 0;
  for (const channel of channels) {
    const id = crypto.randomUUID();
    const payload = JSON.stringify(buildPayload(input, channel.consoleOrigin, appsDomain));
    const row = { id, accountId: input.accountId, channelId: channel.id, event: input.event, eventKey: input.key, appId: input.app?.id ?? null, payload, createdAt: input.at, updatedAt: input.at, nextAttemptAt: input.at };
    if (!(await insertDelivery(env, row))) continue;
    written++;
    await queueDelivery(env, id);
  }
  return written;
}

/** Sends the queue message of a delivery row; a failure is logged and left to the sweep (the row is pending). */
export async function queueDelivery(env: Env, deliveryId: string, delaySeconds = 0): Promise<void> {
  try {
    await env.NOTIFICATIONS.send({ deliveryId } satisfies NotificationMessage, delaySeconds > 0 ? { delaySeconds } : undefined);
  } catch (err) {
    log("warn", "notification not queued; the sweep sends it", { delivery_id: deliveryId, ...describeError(err) });
  }
}

/**
 * One look at an incident's condition for `subject`: the incident opens when the condition starts
 * to hold (and `opened` is raised, keyed by the opening), closes when it clears (and `closed`, if
 * any, is raised). Nothing is sent while it stays as it was. `open`: the kinds open, when the
 * caller read them already.
 */
export async function settleIncident(
  env: Env,
  look: { subject: string; kind: string; holds: boolean; now: number; open?: Set<string> },
  events: { opened: (key: string) => EventInput; closed?: (key: string) => EventInput },
): Promise<IncidentStep> {
  const open = (look.open ?? (await openIncidents(env, look.subject))).has(look.kind);
  const step = incidentStep(open, look.holds);
  const key = `${look.kind}:${look.subject}:${look.now}`;
  if (step === "open" && (await openIncident(env, look.subject, look.kind, look.now))) await raiseEvent(env, events.opened(key));
  if (step === "close" && (await closeIncident(env, look.subject, look.kind)) && events.closed) await raiseEvent(env, events.closed(key));
  return step;
}

/** Raises an event, logging instead of throwing: the change that raised it has happened and stands. */
export async function raiseQuietly(env: Env, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (err) {
    log("warn", "alert not raised", describeError(err));
  }
}
