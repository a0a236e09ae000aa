import { z } from "zod";
import { BUILDERS, type BuilderChoice } from "./docker-build";
import type { PortRange } from "./types";

/**
 * The container engine's settings, joined into the Worker's settings by src/config.ts. The Engine
 * API gives root on its host, so an engine on another machine is reached only over HTTPS with
 * credentials: a Cloudflare Access service token (secrets RUNTIME_ACCESS_CLIENT_ID and
 * RUNTIME_ACCESS_CLIENT_SECRET) or a client certificate (an `mtls_certificates` binding named
 * RUNTIME_MTLS). Registry credentials are secrets too (REGISTRY_USERNAME, REGISTRY_PASSWORD).
 */

export const RUNTIME_KINDS = ["docker", "swarm"] as const;
export type RuntimeKind = (typeof RUNTIME_KINDS)[number];

/** Hosts that are this machine: the only ones an engine may be reached at over plain http. */
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;
/** A registry: host, optional port, optional path (`registry.example.net:5000/apps`). */
const REGISTRY = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;

const secret = () => z.string().optional().transform((raw) => raw?.trim() ?? "");

export const RUNTIME_SETTINGS = {
  /** `docker`: one Docker Engine; `swarm`: a Docker Swarm manager (images through REGISTRY). */
  RUNTIME_KIND: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim() || "docker";
      if (!(RUNTIME_KINDS as readonly string[]).includes(text)) {
        ctx.addIssue({ code: "custom", message: `RUNTIME_KIND must be one of ${RUNTIME_KINDS.join(", ")}, got "${raw}"` });
        return z.NEVER;
      }
      return text as RuntimeKind;
    }),
  /**
   * Which builder builds apps on a Docker engine (src/runtime/docker-build.ts): `auto` uses BuildKit
   * only for builds without memory and CPU limits (Docker Engine does not apply them to BuildKit's
   * steps), `buildkit` whenever the engine has it, `classic` never.
   */
  RUNTIME_BUILDER: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim() || "auto";
      if (!(BUILDERS as readonly string[]).includes(text)) {
        ctx.addIssue({ code: "custom", message: `RUNTIME_BUILDER must be one of ${BUILDERS.join(", ")}, got "${raw}"` });
        return z.NEVER;
      }
      return text as BuilderChoice;
    }),
  /** Where a swarm's images are pushed and pulled from; required with RUNTIME_KIND=swarm. */
  REGISTRY: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim().replace(/\/+$/, "");
      if (text !== "" && !REGISTRY.test(text)) {
        ctx.addIssue({ code: "custom", message: `REGISTRY must be a registry host with an optional port and path, such as registry.example.net/apps, got "${raw}"` });
        return z.NEVER;
      }
      return text;
    }),
  /** The registry's own API (`https://registry.example.net`) to delete a deleted app's images; empty: they stay. */
  REGISTRY_API_URL: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim().replace(/\/+$/, "");
      if (text !== "" && !/^https:\/\/[^\s/]+$/.test(text) && !(/^http:\/\/[^\s/]+$/.test(text) && isLoopbackUrl(text))) {
        ctx.addIssue({ code: "custom", message: `REGISTRY_API_URL must be an https address such as https://registry.example.net (http only for this machine), got "${raw}"` });
        return z.NEVER;
      }
      return text;
    }),
  REGISTRY_USERNAME: secret(),
  REGISTRY_PASSWORD: secret(),
  RUNTIME_ACCESS_CLIENT_ID: secret(),
  RUNTIME_ACCESS_CLIENT_SECRET: secret(),
  /** Whether the RUNTIME_MTLS binding (a client certificate) is there; the binding itself stays in env. */
  RUNTIME_MTLS: z.unknown().optional().transform((binding) => typeof (binding as { fetch?: unknown } | undefined)?.fetch === "function"),
  /**
   * The node proxy on each machine (README "Deploying"), as an https URL naming the node, e.g.
   * `https://{node}`: the app proxy then reaches an instance at that URL, the node's address in
   * place of `{node}`, with `X-Instance-Port` and the Access service token. Empty: instances are
   * reached directly at `http://<node>:<port>` (one machine, or a private network).
   */
  NODE_PROXY_URL: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim().replace(/\/+$/, "");
      if (text !== "" && !/^https:\/\/([a-z0-9.-]*)\{node\}([a-z0-9.-]*)(:\d{1,5})?$/i.test(text)) {
        ctx.addIssue({ code: "custom", message: `NODE_PROXY_URL must be an https URL whose host names the node as {node}, such as https://{node}, got "${raw}"` });
        return z.NEVER;
      }
      return text;
    }),
  /**
   * Each swarm node's own Engine API, as an https URL naming the node, e.g. `https://{node}:2376`
   * (the node's address in place of `{node}`), reached with the same credentials as RUNTIME_URL:
   * the Swarm adapter reads a task's container stats (metrics, memory alerts) and OOM kill there.
   * Empty: only tasks on the manager (RUNTIME_URL's own node) have stats.
   */
  SWARM_NODE_ENGINE_URL: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim().replace(/\/+$/, "");
      if (text !== "" && !/^https:\/\/([a-z0-9.-]*)\{node\}([a-z0-9.-]*)(:\d{1,5})?$/i.test(text)) {
        ctx.addIssue({ code: "custom", message: `SWARM_NODE_ENGINE_URL must be an https URL whose host names the node as {node}, such as https://{node}:2376, got "${raw}"` });
        return z.NEVER;
      }
      return text;
    }),
  /**
   * Placement constraints every app's service gets on a swarm, comma-separated Swarm expressions
   * such as `node.labels.apps==on` (tests pin apps to a node this way); empty: any node.
   */
  SWARM_CONSTRAINTS: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const items = (raw ?? "").split(",").map((c) => c.trim()).filter((c) => c !== "");
      const bad = items.find((c) => !/^[a-z][a-z0-9_.-]*\s*(==|!=)\s*[a-z0-9_.-]+$/i.test(c));
      if (bad !== undefined) {
        ctx.addIssue({ code: "custom", message: `SWARM_CONSTRAINTS must be comma-separated placement constraints such as node.labels.apps==on, got "${bad}"` });
        return z.NEVER;
      }
      return items;
    }),
  /**
   * An image in the registry with `cat` (busybox will do), which the swarm's start-up report runs
   * once on every node to check its no-new-privileges option; empty: that check is skipped, saying so.
   */
  SWARM_PROBE_IMAGE: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim();
      if (text !== "" && !/^[a-z0-9][a-z0-9._\-/:@]*$/i.test(text)) {
        ctx.addIssue({ code: "custom", message: `SWARM_PROBE_IMAGE must be an image reference such as registry.example.net/probe:1, got "${raw}"` });
        return z.NEVER;
      }
      return text;
    }),
  /**
   * Whether each app's overlay network on a swarm is encrypted between nodes (IPsec). Turn it off
   * only where every node's kernel lacks ESP with AES-GCM and the nodes share a private network.
   */
  SWARM_ENCRYPT_NETWORKS: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim().toLowerCase();
      if (text === "" || text === "true") return true;
      if (text === "false") return false;
      ctx.addIssue({ code: "custom", message: `SWARM_ENCRYPT_NETWORKS must be true or false, got "${raw}"` });
      return z.NEVER;
    }),
  /**
   * For tests only: the disk allowance of every instance in bytes, in place of its plan's (0: the
   * plan's, src/apps/plans.ts `diskGb`), so a test need not write gigabytes.
   */
  DISK_ALLOWANCE_OVERRIDE_BYTES: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim() || "0";
      if (!/^\d{1,15}$/.test(text)) {
        ctx.addIssue({ code: "custom", message: `DISK_ALLOWANCE_OVERRIDE_BYTES must be a whole number of bytes (0: each plan's own), got "${raw}"` });
        return z.NEVER;
      }
      return Number(text);
    }),
  /** Host ports instances publish on, `<first>-<last>`; the node proxy passes only these. */
  INSTANCE_PORT_RANGE: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const m = /^(\d{1,5})-(\d{1,5})$/.exec((raw ?? "").trim() || "20000-29999");
      const first = Number(m?.[1]);
      const last = Number(m?.[2]);
      if (!m || first < 1024 || last > 65535 || first > last) {
        ctx.addIssue({ code: "custom", message: `INSTANCE_PORT_RANGE must be <first>-<last> within 1024-65535, such as 20000-29999, got "${raw}"` });
        return z.NEVER;
      }
      return { first, last } satisfies PortRange;
    }),
};

export const RUNTIME_SETTING_DEFAULTS = {
  RUNTIME_KIND: "docker",
  RUNTIME_BUILDER: "auto",
  REGISTRY: "",
  REGISTRY_API_URL: "",
  INSTANCE_PORT_RANGE: { first: 20000, last: 29999 },
  NODE_PROXY_URL: "",
  SWARM_NODE_ENGINE_URL: "",
  SWARM_CONSTRAINTS: [] as string[],
  SWARM_PROBE_IMAGE: "",
  SWARM_ENCRYPT_NETWORKS: true,
  DISK_ALLOWANCE_OVERRIDE_BYTES: 0,
} as const;

interface RuntimeConfig {
  RUNTIME_URL: string;
  RUNTIME_KIND: RuntimeKind;
  REGISTRY: string;
  REGISTRY_USERNAME: string;
  REGISTRY_PASSWORD: string;
  RUNTIME_ACCESS_CLIENT_ID: string;
  RUNTIME_ACCESS_CLIENT_SECRET: string;
  RUNTIME_MTLS: boolean;
}

/** Whether an engine address is this machine (plain http is fine there, and nowhere else). */
export function isLoopbackUrl(url: string): boolean {
  try {
    return LOOPBACK.test(new URL(url).hostname);
  } catch {
    return false;
  }
}

/** Refuses, at start-up, an engine reachable by anyone who can reach its address. */
export function runtimeSettingsProblems(config: RuntimeConfig, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
  const accessHalf = (config.RUNTIME_ACCESS_CLIENT_ID === "") !== (config.RUNTIME_ACCESS_CLIENT_SECRET === "");
  if (accessHalf) issue("RUNTIME_ACCESS_CLIENT_ID", "RUNTIME_ACCESS_CLIENT_ID and RUNTIME_ACCESS_CLIENT_SECRET go together: set both secrets (the Cloudflare Access service token's id and secret) or neither");
  if ((config.REGISTRY_USERNAME === "") !== (config.REGISTRY_PASSWORD === "")) issue("REGISTRY_USERNAME", "REGISTRY_USERNAME and REGISTRY_PASSWORD go together: set both secrets or neither");
  if (config.RUNTIME_KIND === "swarm" && config.REGISTRY === "") issue("REGISTRY", "REGISTRY must be set when RUNTIME_KIND is swarm: the nodes pull every image from it");
  const url = config.RUNTIME_URL;
  if (url === "" || isLoopbackUrl(url)) return;
  if (url.startsWith("http://")) {
    issue(
      "RUNTIME_URL",
      `RUNTIME_URL must be https for an engine on another machine, got "${url}": the Docker Engine API gives root on its host and plain http would send every call in the clear, unauthenticated (put the engine behind Cloudflare Tunnel with Access, or give it a client certificate; see Deploying in the README)`,
    );
    return;
  }
  const accessToken = config.RUNTIME_ACCESS_CLIENT_ID !== "" && config.RUNTIME_ACCESS_CLIENT_SECRET !== "";
  if (!accessToken && !config.RUNTIME_MTLS && !accessHalf) {
    issue(
      "RUNTIME_URL",
      `RUNTIME_URL "${url}" is on another machine and no credentials are set: the Docker Engine API gives root on its host, so set the RUNTIME_ACCESS_CLIENT_ID and RUNTIME_ACCESS_CLIENT_SECRET secrets (a Cloudflare Access service token) or bind a client certificate as RUNTIME_MTLS`,
    );
  }
}
