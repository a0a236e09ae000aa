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
  /** Cloudflare Access service token in front of a remote engine (with RUNTIME_ACCESS_CLIENT_SECRET). */
  RUNTIME_ACCESS_CLIENT_ID?: string;
  RUNTIME_ACCESS_CLIENT_SECRET?: string;
  /** Registry credentials for RUNTIME_KIND=swarm, sent to the engine as X-Registry-Auth. */
  REGISTRY_USERNAME?: string;
  REGISTRY_PASSWORD?: string;
  /** Client certificate for a remote engine (`[[mtls_certificates]]` binding), when not behind Access. */
  RUNTIME_MTLS?: Fetcher;
}
interface Env extends Secrets {}
declare namespace Cloudflare {
  interface Env extends Secrets {}
}
