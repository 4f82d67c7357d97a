import { STATUS_CODES } from 'node:http';

const cache = new Map<number, string>();

/** "200 OK"-style status lines for uWS, built once per code. */
export function statusLine(status: number): string {
  let line = cache.get(status);
  if (!line) cache.set(status, (line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`));
  return line;
}
