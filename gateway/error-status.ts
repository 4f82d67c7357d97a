import type { ErrorCode, ErrorValue } from '../runtime/index.js';
import type { JsonResult } from './http.js';

/** The one place where error codes become HTTP statuses. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  BAD_REQUEST: 400,
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMIT_EXCEEDED: 429,
  QUEUE_FULL: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
};

/** The spec's error envelope for an error value, with the request id so support can find the logs. */
export function errorResult(error: ErrorValue, requestId: string): JsonResult {
  const status = ERROR_STATUS[error.code];
  const body: Record<string, unknown> = {
    success: false,
    error: error.details ? { code: error.code, message: error.message, requestId, details: error.details } : { code: error.code, message: error.message, requestId },
  };
  const headers: Record<string, string> = {};
  const retryAfterMs = error.details?.['retryAfterMs'];
  if (status === 429 || status === 503) {
    if (typeof retryAfterMs === 'number') {
      body['retryAfterMs'] = retryAfterMs;
      headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
    }
  }
  return { kind: 'json', status, body, headers };
}
