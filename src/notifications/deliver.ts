import { getConfig } from "../config";
import { describeError, log } from "../http/log";
import { addressRefusal } from "../source/address";
import type { EventPayload } from "./events";
import { outgoingRequest } from "./formats";
import { type NotificationMessage, queueDelivery } from "./raise";
import { MAX_ATTEMPTS, delivered, retryDelay } from "./rules";
import { type DeliveryRow, channelById, claimTry, deliveryById, dropFinishedDeliveries, openChannelSecret, overdueDeliveries, recordTry } from "./store";

/**
 * The `notifications` queue's consumer (docs/alerts.md, "Retries"): each message names one
 * delivery row; the try is claimed in the row (attempts + 1), the request sent with no redirect
 * followed, and the outcome written back. A failed try is retried through the queue after the
 * backoff (rules.ts: 6 tries over about an hour); the last failure is recorded as `failed`.
 */

/** One try may take this long. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** A claimed try the sweep leaves alone this long (the consumer may still be sending it). */
const LEASE_SECONDS = 120;

/** A try's result; `final`: no later try can do better (the channel is gone, its address refused). */
type Outcome = { statusCode: number | null; error: string | null; final?: boolean };

export async function handleNotificationBatch(batch: MessageBatch<unknown>, env: Env, deps: { now: () => number; fetch?: typeof fetch }): Promise<void> {
  for (const message of batch.messages) {
    const body = message.body as Partial<NotificationMessage> | null;
    if (typeof body?.deliveryId !== "string") {
      message.ack();
      continue;
    }
    try {
      const delay = await deliverOnce(env, body.deliveryId, deps);
      if (delay === null) message.ack();
      else message.retry({ delaySeconds: delay });
    } catch (err) {
      log("warn", "notification try failed", { delivery_id: body.deliveryId, ...describeError(err) });
      message.retry({ delaySeconds: 10 });
    }
  }
}

/** One try of a delivery; the seconds to wait before the next try, or null when there is none. */
export async function deliverOnce(env: Env, deliveryId: string, deps: { now: () => number; fetch?: typeof fetch }): Promise<number | null> {
  const row = await deliveryById(env, deliveryId);
  if (!row || row.status !== "pending") return null;
  const now = deps.now();
  if (!(await claimTry(env, row.id, row.attempts, now, LEASE_SECONDS))) return null;
  const attempts = row.attempts + 1;
  const outcome = await send(env, row, deps);
  const ok = outcome.statusCode !== null && delivered(outcome.statusCode);
  const delay = ok || outcome.final ? null : retryDelay(attempts);
  const status = ok ? "delivered" : delay === null ? "failed" : "pending";
  await recordTry(env, row.id, { status, statusCode: outcome.statusCode, error: outcome.error, nextAttemptAt: now + (delay ?? 0) * 1000, now: deps.now() });
  if (!ok) log("info", "notification not delivered", { delivery_id: row.id, channel_id: row.channelId, attempts, status_code: outcome.statusCode, final: delay === null });
  return delay;
}

async function send(env: Env, row: DeliveryRow, deps: { now: () => number; fetch?: typeof fetch }): Promise<Outcome> {
  const channel = await channelById(env, row.channelId);
  if (!channel) return { statusCode: null, error: "The channel was deleted.", final: true };
  if (addressRefusal(channel.url, { allowLocal: getConfig(env).ALLOW_LOCAL_SOURCES }) !== null) return { statusCode: null, error: "The channel's address is not allowed.", final: true };
  const payload = JSON.parse(row.payload) as EventPayload;
  const request = await outgoingRequest(channel.kind, payload, await openChannelSecret(env, channel), Math.floor(deps.now() / 1000));
  try {
    const reply = await (deps.fetch ?? fetch)(channel.url, { method: "POST", headers: request.headers, body: request.body, redirect: "manual", signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS) });
    await reply.body?.cancel();
    return { statusCode: reply.status, error: delivered(reply.status) ? null : `The receiver answered HTTP ${reply.status}.` };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return { statusCode: null, error: timedOut ? `No answer within ${DELIVERY_TIMEOUT_MS / 1000} s.` : "The receiver could not be reached." };
  }
}

/** Finished deliveries are kept this long, for the deliveries list. */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;

/**
 * The cron's backstop: a pending delivery whose next try is 15 minutes overdue lost its queue
 * message (a send that failed, retries the queue gave up on); it is queued again, or failed once
 * its tries are spent. Finished deliveries older than 30 days are removed.
 */
export async function sweepDeliveries(env: Env, now: number): Promise<void> {
  await dropFinishedDeliveries(env, now - DELIVERY_RETENTION_MS);
  for (const row of await overdueDeliveries(env, now - 15 * 60_000)) {
    if (row.attempts >= MAX_ATTEMPTS) await recordTry(env, row.id, { status: "failed", statusCode: row.statusCode, error: row.error ?? "Every try failed.", nextAttemptAt: now, now });
    else await queueDelivery(env, row.id);
  }
}
