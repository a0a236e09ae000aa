import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { appController } from "../apps/app-controller";
import { getApp, getDeploy } from "../apps/store";
import { viewDeploy } from "../apps/views";
import type { AppEnv } from "../http/context";
import { ApiError, type ErrorCode, invalid, notFound } from "../http/errors";
import { rateLimitHeaders } from "../http/gcra";
import { log } from "../http/log";
import { isUuid } from "../lib/time";
import { sha256Hex } from "../lib/encoding";
import { pushDecision, pushKey } from "./push";
import { openWebhookSecret } from "./secret";
import { readDelivery, verifyDelivery } from "./signature";

/** A push delivery is a few KiB (GitHub lists at most 20 commits); a body past this is refused. */
export const WEBHOOK_BODY_BYTES = 1024 * 1024;
/** Deliveries per app: a burst of 10, then one every 2 s (a forge sends one per push). */
export const WEBHOOK_RATE = { perMinute: 30, burst: 10 };

const NO_SUCH_APP = "There is no app at this webhook address.";
const BAD_SIGNATURE = "The delivery's signature does not match the app's webhook secret.";
/** The answer to a push received before (same ref and commits), under whatever delivery id. */
export const REPLAYED_PUSH = "This push (the same ref and commits) was received before; it does not deploy twice.";

/** The delivery's JSON: GitHub may send it form-encoded (`payload=`), every forge can send it raw. */
function parsePayload(body: Uint8Array, contentType: string): unknown {
  let text = new TextDecoder().decode(body);
  if (contentType.startsWith("application/x-www-form-urlencoded")) text = new URLSearchParams(text).get("payload") ?? "";
  try {
    return JSON.parse(text);
  } catch {
    throw invalid("body: The delivery is not a JSON push payload.");
  }
}

/**
 * The public webhook endpoint of deploy on push: `POST /webhooks/apps/<app id>`. No session and no
 * CSRF token: the delivery's signature is its credential (GitHub `X-Hub-Signature-256`,
 * Gitea/Forgejo `X-Gitea-Signature`, GitLab `X-Gitlab-Token`, each checked in constant time).
 * Bounded body, then the signature (a delivery that fails it spends nothing), then the per-app
 * rate limit, then the branch and event rule; a push to the deploy branch goes through the app's
 * controller exactly as Deploy pressed in the console (recorded as `push`), and a push seen before
 * (by its ref and commits, push.ts `pushKey`) starts nothing, whatever its delivery id.
 */
export const webhookRoutes = new Hono<AppEnv>().post(
  "/apps/:id",
  bodyLimit({
    maxSize: WEBHOOK_BODY_BYTES,
    onError: () => {
      throw new ApiError("PAYLOAD_TOO_LARGE", `The delivery is larger than ${WEBHOOK_BODY_BYTES / 1024} KiB.`);
    },
  }),
  async (c) => {
    const id = c.req.param("id");
    if (!isUuid(id)) throw notFound(NO_SUCH_APP);
    const appId = id.toLowerCase();
    const { now, uuid } = c.get("deps");
    const app = await getApp(c.env, appId);
    if (!app) throw notFound(NO_SUCH_APP);
    const delivery = readDelivery((name) => c.req.header(name));
    const body = new Uint8Array(await c.req.arrayBuffer());
    const secret = app.webhookSecret ? await openWebhookSecret(c.env, app.id, app.webhookSecret) : "";
    // The signature first: unsigned junk spends nothing, so it cannot lock the real forge out.
    if (!delivery || !(await verifyDelivery(delivery, body, secret))) {
      log("info", "webhook delivery refused", { app_id: app.id, forge: delivery?.forge ?? null });
      throw new ApiError("UNAUTHORIZED", delivery ? BAD_SIGNATURE : "The delivery carries no signature (X-Hub-Signature-256, X-Gitea-Signature or X-Gitlab-Token).");
    }
    const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(`webhook:${app.id}`));
    const decision = await limiter.take({ now: now(), policy: WEBHOOK_RATE });
    if (!decision.allowed) {
      const wait = decision.retryAfterSeconds;
      throw new ApiError("RATE_LIMIT_EXCEEDED", `Too many deliveries for this app. Wait ${wait} second${wait === 1 ? "" : "s"}.`, {
        headers: { ...rateLimitHeaders(decision, WEBHOOK_RATE), "Retry-After": String(wait) },
      });
    }
    const payload = parsePayload(body, c.req.header("Content-Type") ?? "");
    const push = pushDecision(delivery.forge, delivery.event, payload, app.branch);
    const fields = { app_id: app.id, forge: delivery.forge, event: delivery.event, delivery: delivery.id };
    if (push.action === "ignore") {
      log("info", "webhook delivery ignored", fields);
      return c.json({ success: true, deployed: false, reason: push.reason }, 200);
    }
    const key = pushKey(payload) ?? `body ${await sha256Hex(body)}`;
    const result = await appController(c.env, app.id).deployOnPush({ appId: app.id, deployId: uuid(), now: now(), push: key });
    log("info", "webhook push", { ...fields, outcome: result.outcome });
    if (result.outcome === "duplicate") return c.json({ success: true, deployed: false, reason: REPLAYED_PUSH }, 200);
    if (result.outcome === "refused") throw new ApiError(result.code as ErrorCode, result.message);
    const deploy = await getDeploy(c.env, app.id, result.deployId);
    return c.json({ success: true, deployed: result.outcome === "started", deploy: deploy ? viewDeploy(deploy, app) : { id: result.deployId, status: "building" } }, 202);
  },
);
