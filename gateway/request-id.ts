import { requestId } from '../runtime/index.js';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{8,128}$/;

/** The caller's X-Request-Id when it is a sane token, else a fresh one (so logs cannot be forged with junk). */
export function requestIdFrom(header: string | undefined): string {
  return header !== undefined && ACCEPTABLE.test(header) ? header : requestId();
}
