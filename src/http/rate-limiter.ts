import { DurableObject } from "cloudflare:workers";

/** One per caller: GCRA state for the API's call-rate limit. */
export class RateLimiter extends DurableObject<Env> {}
