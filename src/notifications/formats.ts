import { EVENT_TITLES, type EventPayload } from "./events";
import { signatureHeaders } from "./signing";

/**
 * What each kind of channel is sent for one event (docs/alerts.md): the webhook gets the payload
 * itself, signed; Slack's and Discord's incoming webhooks get their own JSON shapes (Slack
 * `{text, blocks}`, Discord `{content, embeds}`) saying the same in a line and a link. Pure but
 * for the signature's HMAC.
 */

export type ChannelKind = "webhook" | "slack" | "discord";
export const CHANNEL_KINDS = ["webhook", "slack", "discord"] as const satisfies readonly ChannelKind[];

export interface OutgoingRequest {
  headers: Record<string, string>;
  body: string;
}

const USER_AGENT = "control-plane-notifications/1";

/** The message's one line: the event's title, the app, and the detail that says most. */
export function summary(payload: EventPayload): string {
  const title = EVENT_TITLES[payload.event];
  const subject = payload.app ? `${title}: ${payload.app.name}` : title;
  const message = typeof payload.details.message === "string" ? payload.details.message : null;
  return message ? `${subject}. ${message}` : `${subject}.`;
}

/** Slack's incoming-webhook body: the line as `text` (the notification's fallback) and a section block with the console link. */
export function slackBody(payload: EventPayload): { text: string; blocks: unknown[] } {
  const text = summary(payload);
  return {
    text,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: `${escapeSlack(text)}\n<${payload.console_url}|Open in the console>` } },
      { type: "context", elements: [{ type: "mrkdwn", text: `\`${payload.event}\` at ${payload.at}${payload.app ? ` · ${payload.app.url}` : ""}` }] },
    ],
  };
}

/** Discord's webhook body: the line as `content` and one embed linking to the console. */
export function discordBody(payload: EventPayload): { content: string; embeds: unknown[] } {
  const text = summary(payload);
  return {
    content: text.slice(0, 2000),
    embeds: [
      {
        title: EVENT_TITLES[payload.event].slice(0, 256),
        description: (payload.app ? `${payload.app.name} (${payload.app.url})` : payload.event).slice(0, 4096),
        url: payload.console_url,
        timestamp: payload.at,
        footer: { text: payload.event },
      },
    ],
  };
}

/** Slack's mrkdwn treats &, < and > as control characters. */
function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The request for a channel of `kind`; a webhook's is signed with `secret` at `nowSeconds`. */
export async function outgoingRequest(kind: ChannelKind, payload: EventPayload, secret: string | null, nowSeconds: number): Promise<OutgoingRequest> {
  const base = { "Content-Type": "application/json", "User-Agent": USER_AGENT };
  if (kind === "slack") return { headers: base, body: JSON.stringify(slackBody(payload)) };
  if (kind === "discord") return { headers: base, body: JSON.stringify(discordBody(payload)) };
  if (secret === null) throw new Error("a webhook channel has no secret");
  const body = JSON.stringify(payload);
  return { headers: { ...base, ...(await signatureHeaders(secret, nowSeconds, body)) }, body };
}
