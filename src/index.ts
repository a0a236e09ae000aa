import { createApp } from "./app";

export { ManagedDatabase } from "./databases/managed-database";
export { ExportGate } from "./exports/export-gate";
export { RateLimiter } from "./http/rate-limiter";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
