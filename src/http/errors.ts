import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The closed set of error codes the service answers with, each with its status.
 * Clients branch on `code`; the wording of `error` may change, the code never does.
 */
export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  INVALID_ENV: 400,
  UNAUTHORIZED: 401,
  TOTP_REQUIRED: 401,
  SIGNED_URL_INVALID: 401,
  SIGNED_URL_EXPIRED: 401,
  INSUFFICIENT_FUNDS: 402,
  CSRF_REJECTED: 403,
  PLAN_REQUIRED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  CHANGE_IN_FLIGHT: 409,
  INVALID_STATE: 409,
  DELETE_FAILED: 409,
  APP_NOT_RUNNING: 409,
  DOMAIN_LIMIT: 409,
  DOMAIN_TAKEN: 409,
  ENV_CHANGED: 409,
  DEPLOY_IN_PROGRESS: 409,
  ROLLBACK_UNAVAILABLE: 409,
  CONFIRMATION_REQUIRED: 409,
  EXPORT_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  cooldown_active: 429,
  export_in_flight: 429,
  INTERNAL_ERROR: 500,
  LAUNCH_FAILED: 502,
  ENGINE_UNAVAILABLE: 503,
  INSUFFICIENT_CAPACITY: 503,
  export_pending: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The spec's error envelope. */
export interface ErrorEnvelope {
  success: false;
  error: string;
  code: ErrorCode;
}

/**
 * An error that becomes a reply: the code decides the status, `message` is the sentence the
 * client sees, `headers` go on the reply (Retry-After), `extra` joins the envelope (`status`).
 * `cause` is for the log only.
 */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { headers?: Record<string, string>; extra?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    // An ApiError is an answer, not a fault: nothing reads its stack (a cause keeps its own), and
    // capturing one costs more than the rest of a short request's own work.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message, { cause: options.cause });
    Error.stackTraceLimit = limit;
    this.name = "ApiError";
    this.status = ERROR_STATUS[code];
  }
}

export function envelope(code: ErrorCode, error: string, extra: Record<string, unknown> = {}) {
  return { success: false as const, error, code, ...extra };
}

/** The JSON reply for an error code. */
export function errorResponse(
  code: ErrorCode,
  error: string,
  init: { headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
): Response {
  return new Response(JSON.stringify(envelope(code, error, init.extra)), {
    status: ERROR_STATUS[code],
    headers: { "Content-Type": "application/json; charset=utf-8", ...init.headers },
  });
}

export const notFound = (what = "Not found.") => new ApiError("NOT_FOUND", what);
export const invalid = (message: string) => new ApiError("INVALID_REQUEST", message);
