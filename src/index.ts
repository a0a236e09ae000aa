import { env } from "cloudflare:workers";
import { createApp } from "./app";
import { getConfig } from "./config";

export { ManagedDatabase } from "./databases/managed-database";
export { ExportGate } from "./exports/export-gate";
export { RateLimiter } from "./http/rate-limiter";

// Validate the settings as the Worker loads: a bad value stops it here with a message naming
// the variable, instead of failing on some later request.
getConfig(env);

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
