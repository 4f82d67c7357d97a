/**
 * The error catalog. Errors are values `{ code, message }` that cross thread boundaries intact;
 * identify them by `code`, never by `instanceof` (a worker's Error loses its prototype).
 * The HTTP status of each code is decided in one place: gateway/error-status.ts.
 */

/** Every error code Parley answers with (the spec's table plus CONFLICT and PAYLOAD_TOO_LARGE). */
export const ERROR_CODES = [
  'BAD_REQUEST',
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'RATE_LIMIT_EXCEEDED',
  'QUEUE_FULL',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;

/** One of the catalog's codes. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The serialisable form of an error: what crosses threads and reaches clients. */
export interface ErrorValue {
  code: ErrorCode;
  message: string;
  /** Extra machine-readable facts (field name, line/column, retryAfterMs...). Never secrets. */
  details?: Record<string, unknown>;
}

/** An Error that carries a catalog code; throw it anywhere, the gateway maps it to HTTP. */
export class ParleyError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ParleyError';
    this.code = code;
    this.details = details;
  }

  /** The value form, safe to send to another thread or a client. */
  toValue(): ErrorValue {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

const CODE_SET: ReadonlySet<string> = new Set(ERROR_CODES);

/** True when `x` looks like an ErrorValue (or a ParleyError, or one that crossed a thread). */
export function isErrorValue(x: unknown): x is ErrorValue {
  return typeof x === 'object' && x !== null && CODE_SET.has((x as { code?: unknown }).code as string) && typeof (x as { message?: unknown }).message === 'string';
}

/** Turns anything thrown into an ErrorValue; unknown throwables become INTERNAL_ERROR without leaking their text. */
export function toErrorValue(err: unknown): ErrorValue {
  if (err instanceof ParleyError) return err.toValue();
  if (isErrorValue(err)) return err.details ? { code: err.code, message: err.message, details: err.details } : { code: err.code, message: err.message };
  return { code: 'INTERNAL_ERROR', message: 'Unexpected internal error' };
}

/** Rebuilds a throwable from an ErrorValue received from another thread. */
export function fromErrorValue(value: ErrorValue): ParleyError {
  return new ParleyError(value.code, value.message, value.details);
}
