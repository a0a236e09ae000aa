/**
 * The events an account's notification channels may ask for (docs/alerts.md), and the JSON
 * payload every channel's message is made from. Pure: no I/O.
 */

export const EVENT_NAMES = [
  "deploy.live",
  "deploy.failed",
  "app.crashed",
  "app.unhealthy",
  "app.recovered",
  "app.memory_high",
  "app.errors_high",
  "wallet.low",
  "renewal.failed",
  "domain.error",
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

/** The event a channel's Send test delivers; no channel subscribes to it. */
export const TEST_EVENT = "test";

/** One line per event, for the console's checkboxes and the chat messages. */
export const EVENT_TITLES: Record<EventName | typeof TEST_EVENT, string> = {
  "deploy.live": "Deploy live",
  "deploy.failed": "Deploy failed",
  "app.crashed": "App crashed",
  "app.unhealthy": "App unhealthy",
  "app.recovered": "App recovered",
  "app.memory_high": "Memory above 90 % of the plan's limit for 5 minutes",
  "app.errors_high": "5xx answers above 5 % of the requests in 5 minutes",
  "wallet.low": "Wallet below the renewals due within 7 days",
  "renewal.failed": "Renewal failed",
  "domain.error": "Custom domain error",
  test: "Test notification",
};

export interface PayloadApp {
  id: string;
  name: string;
  url: string;
}

/** The webhook body (and what the Slack and Discord messages say): `{event, at, app, console_url, details}`. */
export interface EventPayload {
  event: EventName | typeof TEST_EVENT;
  /** ISO 8601. */
  at: string;
  /** The app the event is about; null for the account's own events (wallet.low, test). */
  app: PayloadApp | null;
  console_url: string;
  details: Record<string, unknown>;
}

/** What raises an event: the app (by row), or the account alone. */
export interface EventInput {
  event: EventName;
  accountId: string;
  /** The app's id, name and subdomain; absent for the account's own events. */
  app?: { id: string; name: string; subdomain: string };
  /** One incident's name: the same key is delivered once per channel (a deploy's id, an incident's opening). */
  key: string;
  at: number;
  details: Record<string, unknown>;
}

/** The app's public address as the console's origin reaches it: same scheme and port, the app's hostname. */
export function appAddress(subdomain: string, appsDomain: string, consoleOrigin: string): string {
  const { protocol, port } = new URL(consoleOrigin);
  return `${protocol}//${subdomain}.${appsDomain}${port ? `:${port}` : ""}`;
}

/** The payload of an event for a channel made on `consoleOrigin`. */
export function buildPayload(input: Omit<EventInput, "accountId" | "key"> | { event: typeof TEST_EVENT; at: number; details: Record<string, unknown>; app?: EventInput["app"] }, consoleOrigin: string, appsDomain: string): EventPayload {
  const app = input.app ? { id: input.app.id, name: input.app.name, url: appAddress(input.app.subdomain, appsDomain, consoleOrigin) } : null;
  const path = app ? `/console/apps/${app.id}` : input.event === "wallet.low" || input.event === "renewal.failed" ? "/console/billing" : "/console/notifications";
  return { event: input.event, at: new Date(input.at).toISOString(), app, console_url: `${consoleOrigin}${path}`, details: input.details };
}
