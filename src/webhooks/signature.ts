import { timingSafeEqual } from "../auth/password";
import { utf8 } from "../lib/encoding";

/**
 * Who signed a webhook delivery and how, read from its headers, and the check of that signature.
 * The forges' documented formats:
 * - GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body under the secret>`,
 *   `X-GitHub-Event`, `X-GitHub-Delivery` (a GUID, kept on redelivery).
 * - Gitea and Forgejo: `X-Gitea-Signature` / `X-Forgejo-Signature: <hex HMAC-SHA256>` (no
 *   prefix), `X-Gitea-Event` / `X-Forgejo-Event`, `X-Gitea-Delivery` / `X-Forgejo-Delivery`. They
 *   also send GitHub's headers for compatibility, so they are recognised first.
 * - GitLab: `X-Gitlab-Token: <the secret itself>`, `X-Gitlab-Event: Push Hook`, and
 *   `Idempotency-Key` (the same across retries) or `X-Gitlab-Event-UUID`.
 */

export type Forge = "github" | "gitea" | "gitlab";

export interface Delivery {
  forge: Forge;
  /** The signature header's value: hex HMAC (GitHub without its `sha256=`), or GitLab's token. */
  signature: string;
  /** The event name as the forge sends it (`push`, `ping`, `Push Hook`), or "" when absent. */
  event: string;
  /** The delivery's id, for replays; null when the forge sent none. */
  id: string | null;
}

type HeaderGetter = (name: string) => string | null | undefined;

const first = (get: HeaderGetter, ...names: string[]): string | null => {
  for (const name of names) {
    const value = get(name);
    if (value !== null && value !== undefined && value !== "") return value.trim();
  }
  return null;
};

/** The delivery a request carries, or null when it holds no signature header we know. */
export function readDelivery(get: HeaderGetter): Delivery | null {
  const gitea = first(get, "X-Forgejo-Signature", "X-Gitea-Signature");
  if (gitea !== null) {
    return { forge: "gitea", signature: gitea, event: first(get, "X-Forgejo-Event", "X-Gitea-Event") ?? "", id: first(get, "X-Forgejo-Delivery", "X-Gitea-Delivery") };
  }
  const github = first(get, "X-Hub-Signature-256");
  if (github !== null) {
    return { forge: "github", signature: github.startsWith("sha256=") ? github.slice("sha256=".length) : "", event: first(get, "X-GitHub-Event") ?? "", id: first(get, "X-GitHub-Delivery") };
  }
  const gitlab = first(get, "X-Gitlab-Token");
  if (gitlab !== null) {
    return { forge: "gitlab", signature: gitlab, event: first(get, "X-Gitlab-Event") ?? "", id: first(get, "Idempotency-Key", "X-Gitlab-Event-UUID") };
  }
  return null;
}

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(text)));
}

/**
 * Whether the delivery was signed with `secret`, in constant time: an HMAC is checked with Web
 * Crypto's verify (which compares in constant time); GitLab's token is compared through the
 * SHA-256 of both sides, so neither its content nor its length shows in the timing.
 */
export async function verifyDelivery(delivery: Delivery, body: Uint8Array<ArrayBuffer>, secret: string): Promise<boolean> {
  if (secret === "") return false;
  if (delivery.forge === "gitlab") return timingSafeEqual(await digest(delivery.signature), await digest(secret));
  if (!HEX_SHA256.test(delivery.signature)) return false;
  const key = await crypto.subtle.importKey("raw", utf8(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  return crypto.subtle.verify("HMAC", key, hexBytes(delivery.signature), body);
}

/** The signature header a forge would send for `body` under `secret` (for tests and the dev forge). */
export async function signBody(body: Uint8Array<ArrayBuffer>, secret: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", utf8(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return [...new Uint8Array(await crypto.subtle.sign("HMAC", key, body))].map((b) => b.toString(16).padStart(2, "0")).join("");
}
