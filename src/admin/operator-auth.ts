/**
 * The guard of every operator route: `Authorization: Bearer <OPERATOR_TOKEN>`. Failures are limited
 * per client address before the token is compared (in constant time), and no token is ever logged.
 */
import type { MiddlewareHandler } from "hono";
import { timingSafeEqual } from "../auth/password";
import { ADDRESS_FAILURES, checkAllowance, clientAddress, spendAllowance } from "../http/auth-limits";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import type { RatePolicy } from "../http/gcra";
import { log } from "../http/log";

const encoder = new TextEncoder();

export function operatorAuth(): MiddlewareHandler<AppEnv> {
  return async function operatorAuth(c, next) {
    const keys: [string, RatePolicy][] = [[`auth-ip:${clientAddress(c)}`, ADDRESS_FAILURES]];
    await checkAllowance(c, keys);
    const expected = c.get("config").OPERATOR_TOKEN;
    const given = /^Bearer (\S+)$/i.exec(c.req.header("Authorization") ?? "")?.[1] ?? "";
    const ok = expected !== "" && given.length === expected.length && timingSafeEqual(encoder.encode(given), encoder.encode(expected));
    if (!ok) {
      await spendAllowance(c, keys);
      log("warn", "operator call refused", { reason: expected === "" ? "OPERATOR_TOKEN is not set" : given ? "wrong token" : "no token" });
      throw new ApiError("UNAUTHORIZED", "The operator token is required: send `Authorization: Bearer <OPERATOR_TOKEN>`.");
    }
    await next();
  };
}
