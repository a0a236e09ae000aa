import { ApiError, type ErrorCode } from "../../http/errors";

/**
 * What a console action answers: what it did, or why it refused. A refusal carries the error code
 * (the JSON routes' envelope), the sentence, and the form field it concerns (the pages show the
 * sentence beside that field).
 */
export interface Refusal {
  ok: false;
  code: ErrorCode;
  message: string;
  field?: string;
  /** Joins the JSON error envelope (as `ApiError`'s `extra`). */
  extra?: Record<string, unknown>;
}

export type Outcome<T extends object = object> = ({ ok: true } & T) | Refusal;

export function refuse(code: ErrorCode, message: string, field?: string): Refusal {
  return field === undefined ? { ok: false, code, message } : { ok: false, code, message, field };
}

/** A refusal as the JSON routes send it: a 400 names its field first (`name: ...`), other codes do not. */
export function refusalError(refusal: Refusal): ApiError {
  const named = refusal.code === "INVALID_REQUEST" && refusal.field !== undefined;
  return new ApiError(refusal.code, named ? `${refusal.field}: ${refusal.message}` : refusal.message, refusal.extra ? { extra: refusal.extra } : {});
}

/** The JSON routes' reading of an outcome: what was done, or the refusal thrown as its error reply. */
export function orThrow<T extends object>(outcome: Outcome<T>): { ok: true } & T {
  if (!outcome.ok) throw refusalError(outcome);
  return outcome;
}

/** The pages' reading of a refusal: the sentence beside its field (form-wide under `_form`). */
export function refusalFields(refusal: Refusal): Record<string, string> {
  return { [refusal.field ?? "_form"]: refusal.message };
}
