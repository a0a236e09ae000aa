import { z } from "zod";
import { getConfig } from "../config";
import { ApiError } from "../http/errors";
import { addressRefusal } from "../source/address";
import { EVENT_NAMES, TEST_EVENT, buildPayload } from "./events";
import { CHANNEL_KINDS } from "./formats";
import { queueDelivery } from "./raise";
import { type ChannelRow, type DeliveryRow, createChannel, insertDelivery, listChannels } from "./store";

/**
 * What the console's JSON routes and its page share: the request's shapes (zod), the address rule
 * of a channel's URL, making a channel, sending it a test, and the JSON views.
 */

/** Channels one account may have. */
export const MAX_CHANNELS = 20;

export const ChannelRequest = z.object({
  kind: z.enum(CHANNEL_KINDS, { message: `Choose one of ${CHANNEL_KINDS.join(", ")}.` }),
  url: z.string({ message: "Give the address the notifications are sent to." }).trim().min(1, "Give the address the notifications are sent to.").max(2048, "The address is longer than 2,048 characters."),
  events: z
    .array(z.enum(EVENT_NAMES, { message: `Each event is one of ${EVENT_NAMES.join(", ")}.` }), { message: "Give the events as a list." })
    .min(1, "Choose at least one event.")
    .max(EVENT_NAMES.length)
    .refine((events) => new Set(events).size === events.length, "Name each event once."),
});

export const ChannelId = z.string().uuid("Not a channel id.");

export const DeliveriesQuery = z.object({
  limit: z.coerce.number({ message: "Give a whole number from 1 to 100." }).int("Give a whole number from 1 to 100.").min(1, "Give a whole number from 1 to 100.").max(100, "Give a whole number from 1 to 100.").default(20),
});

/** Why a channel URL is refused (the source fetches' address rule), as a sentence; null when it is allowed. */
export function channelUrlProblem(url: string, allowLocal: boolean): string | null {
  const refusal = addressRefusal(url, { allowLocal });
  if (refusal === null) return null;
  if (refusal === "not_http") return "Give an https:// address.";
  if (refusal === "credentials") return "The address may not hold a user name or password.";
  if (refusal === "forbidden") return "Notifications are never sent to link-local, metadata or reserved addresses.";
  if (refusal === "local") return "Notifications are sent to loopback or private addresses only when ALLOW_LOCAL_SOURCES is on.";
  return "Give an https:// address; http is accepted only when ALLOW_LOCAL_SOURCES is on.";
}

/** Makes a channel after the checks that need the account and the settings; the secret only in this reply. */
export async function addChannel(env: Env, input: z.output<typeof ChannelRequest> & { accountId: string; consoleOrigin: string; now: number }) {
  const problem = channelUrlProblem(input.url, getConfig(env).ALLOW_LOCAL_SOURCES);
  if (problem) throw new ApiError("INVALID_REQUEST", `url: ${problem}`, { extra: { field: "url" } });
  if ((await listChannels(env, input.accountId)).length >= MAX_CHANNELS) throw new ApiError("CONFLICT", `An account has at most ${MAX_CHANNELS} notification channels; delete one first.`);
  const { row, secret } = await createChannel(env, input);
  return { ...viewChannel(row), ...(secret === null ? {} : { secret }) };
}

/** Queues a test notification to one channel; its delivery's id. */
export async function sendTest(env: Env, channel: ChannelRow, now: number): Promise<string> {
  const id = crypto.randomUUID();
  const payload = buildPayload({ event: TEST_EVENT, at: now, details: { message: "This is a test notification sent from the console." } }, channel.consoleOrigin, getConfig(env).APPS_DOMAIN);
  const row = { id, accountId: channel.accountId, channelId: channel.id, event: TEST_EVENT, eventKey: `test:${id}`, appId: null, payload: JSON.stringify(payload), createdAt: now, updatedAt: now, nextAttemptAt: now };
  await insertDelivery(env, row);
  await queueDelivery(env, id);
  return id;
}

export function viewChannel(row: ChannelRow) {
  return { id: row.id, kind: row.kind, url: row.url, events: row.events, created_at: new Date(row.createdAt).toISOString() };
}

export function viewDelivery(row: DeliveryRow) {
  return {
    id: row.id,
    channel_id: row.channelId,
    event: row.event,
    app_id: row.appId,
    status: row.status,
    status_code: row.statusCode,
    attempts: row.attempts,
    error: row.error,
    created_at: new Date(row.createdAt).toISOString(),
    updated_at: new Date(row.updatedAt).toISOString(),
  };
}
