// Secrets set with `wrangler secret put` (locally in .dev.vars); `wrangler types` does not see them.
interface Secrets {
  /** Link signing keys, `<kid>:<secret>` comma-separated, newest first. */
  LINK_SIGNING_KEYS: string;
  /** AES-256-GCM key for environment variable values, 32 bytes base64. */
  ENV_ENCRYPTION_KEY: string;
  /** Cloudflare API token with SSL and Certificates edit on the zone (HOSTNAME_PROVIDER=cloudflare only). */
  CLOUDFLARE_API_TOKEN?: string;
  /** Bearer token of the operator routes (/admin/api); optional: unset turns them off. */
  OPERATOR_TOKEN?: string;
}
interface Env extends Secrets {}
declare namespace Cloudflare {
  interface Env extends Secrets {}
}
