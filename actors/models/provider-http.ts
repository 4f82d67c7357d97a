/**
 * What both providers share on the wire: the POST that starts a stream, the Server-Sent Events
 * reader, and the mapping of an HTTP failure to a clear ParleyError that never repeats the key.
 */
import { ParleyError } from '../../runtime/index.js';
import type { ProviderConfig } from './provider.js';

/** Largest error body read from a provider (the message is all we need). */
const MAX_ERROR_BODY = 64 * 1024;
/** Largest streamed response accepted (a runaway stream must not exhaust memory). */
const MAX_STREAM_BYTES = 8 * 1024 * 1024;
/** Longest provider message quoted in an error. */
const MAX_QUOTED = 300;

/** One Server-Sent Event: its `event:` name ("message" when absent) and its joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * POSTs `body` as JSON and returns the successful response. A non-2xx status becomes the
 * ParleyError of providerHttpError. Network failures and aborts propagate for the router to name.
 */
export async function postForStream(cfg: ProviderConfig, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
    signal,
  });
  if (res.ok && res.body) return res;
  cfg.onFirstByte?.();
  const text = await readBounded(res, MAX_ERROR_BODY);
  throw providerHttpError(cfg, res.status, res.headers, text);
}

/** Reads a response body as text, stopping after `limit` bytes. */
async function readBounded(res: Response, limit: number): Promise<string> {
  if (!res.body) return '';
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    text += decoder.decode(chunk, { stream: true });
    if (size >= limit) break;
  }
  return text;
}

/**
 * Yields the Server-Sent Events of a streaming response (lines ending in \n, \r\n or \r; comments
 * and id/retry fields ignored). Calls cfg.onFirstByte on the first chunk.
 */
export async function* readSse(cfg: ProviderConfig, res: Response): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let size = 0;
  let event = '';
  let data: string[] = [];
  let first = true;
  const dispatch = function* (line: string): Generator<SseEvent> {
    if (line === '') {
      if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
      event = '';
      data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (first) {
      first = false;
      cfg.onFirstByte?.();
    }
    size += chunk.byteLength;
    if (size > MAX_STREAM_BYTES) throw new ParleyError('SERVICE_UNAVAILABLE', `Model provider "${cfg.name}" streamed more than ${MAX_STREAM_BYTES} bytes`, { provider: cfg.name });
    buffer += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const c = buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (c === 13 && i === buffer.length - 1) break;
      yield* dispatch(buffer.slice(start, i));
      if (c === 13 && buffer.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    buffer = buffer.slice(start);
  }
  buffer += decoder.decode();
  if (buffer !== '') yield* dispatch(buffer);
  yield* dispatch('');
}

/** Parses one event's JSON data; a malformed payload is the provider's fault, named clearly. */
export function parseEventData(cfg: ProviderConfig, data: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(data);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  throw new ParleyError('SERVICE_UNAVAILABLE', `Model provider "${cfg.name}" sent a malformed stream event`, { provider: cfg.name, model: cfg.model });
}

/** Parses the assembled JSON arguments of a tool call ("" means no arguments). */
export function parseToolArguments(cfg: ProviderConfig, toolName: string, json: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new ParleyError('SERVICE_UNAVAILABLE', `Model "${cfg.model}" called tool "${toolName}" with arguments that are not valid JSON`, { provider: cfg.name, model: cfg.model, tool: toolName });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ParleyError('SERVICE_UNAVAILABLE', `Model "${cfg.model}" called tool "${toolName}" with arguments that are not a JSON object`, { provider: cfg.name, model: cfg.model, tool: toolName });
  }
  return value as Record<string, unknown>;
}

/** A provider's own error message, shortened and with the key (and any bearer token) blanked out. */
export function quoteProviderMessage(cfg: ProviderConfig, message: string): string {
  let text = message;
  if (cfg.apiKey) text = text.split(cfg.apiKey).join('[redacted]');
  // Providers echo partial keys ("sk-abc***xyz"); anything key-shaped goes.
  text = text.replace(/\b(sk|prl|key)[-_][A-Za-z0-9*_.-]{4,}/gi, '[redacted]');
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
}

/** The message inside an OpenAI or Anthropic error body ({error: {message}}), if any. */
function errorBodyMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof body.error === 'object' && typeof body.error?.message === 'string') return body.error.message;
    if (typeof body.error === 'string') return body.error;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON: no message to quote
  }
  return undefined;
}

/** Milliseconds from a Retry-After header (seconds or an HTTP date), or undefined. */
export function retryAfterMs(headers: Headers): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const raw = headers.get('retry-after');
  if (raw === null) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw.trim())) return Math.ceil(Number(raw) * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * Maps a provider's HTTP failure to a ParleyError. Configuration problems (bad key, unknown model,
 * a request the provider refuses) are BAD_REQUEST; rate limits and outages are SERVICE_UNAVAILABLE
 * (with retryAfterMs when the provider said). 401/403 never quote the provider, whose message may
 * echo part of the key.
 */
export function providerHttpError(cfg: ProviderConfig, status: number, headers: Headers, bodyText: string): ParleyError {
  const who = `Model provider "${cfg.name}"`;
  const details: Record<string, unknown> = { provider: cfg.name, model: cfg.model, status };
  const said = errorBodyMessage(bodyText);
  const quoted = said ? `: ${quoteProviderMessage(cfg, said)}` : '';
  if (status === 401 || status === 403) {
    return new ParleyError('BAD_REQUEST', `${who} rejected the API key (HTTP ${status}); check the key in the project's model settings`, details);
  }
  if (status === 404) {
    return new ParleyError('BAD_REQUEST', `${who} does not know model "${cfg.model}" or its URL is wrong (HTTP 404)${quoted}`, details);
  }
  if (status === 429) {
    const wait = retryAfterMs(headers);
    if (wait !== undefined) details['retryAfterMs'] = wait;
    return new ParleyError('SERVICE_UNAVAILABLE', `${who} is rate limiting this project (HTTP 429)${wait !== undefined ? `; retry after ${Math.ceil(wait / 1000)} s` : ''}`, details);
  }
  if (status >= 500) {
    const wait = retryAfterMs(headers);
    if (wait !== undefined) details['retryAfterMs'] = wait;
    return new ParleyError('SERVICE_UNAVAILABLE', `${who} failed (HTTP ${status})${quoted}`, details);
  }
  return new ParleyError('BAD_REQUEST', `${who} refused the request (HTTP ${status})${quoted}`, details);
}
