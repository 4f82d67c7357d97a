import type { Principal } from '../actors/index.js';

/** A request as the transport-neutral core sees it (uWS and node:http adapters build it). */
export interface HttpRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The raw body, already bounded by the route's limit. */
  body: Buffer;
  requestId: string;
}

/** A JSON (or plain) response. */
export interface JsonResult {
  kind: 'json';
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** Where a streaming response writes. */
export interface StreamSink {
  /** Writes a chunk; false when the client is gone. */
  write(chunk: string): boolean;
  /** Ends the response; safe to call twice. */
  end(): void;
  /** Called once when the client disconnects before end(). */
  onClose(listener: () => void): void;
  readonly closed: boolean;
}

/** A streaming response (SSE): the adapter writes status and headers, then hands over a sink. */
export interface StreamResult {
  kind: 'stream';
  status: number;
  headers: Record<string, string>;
  start(sink: StreamSink): void;
}

/** What a route handler returns. */
export type HttpResult = JsonResult | StreamResult;

/** What a handler gets: the request, path parameters, the caller, and the parsed body. */
export interface RouteContext {
  req: HttpRequest;
  params: Record<string, string>;
  /** Set on routes that require authentication. */
  principal: Principal;
  /** The parsed JSON body ({} when the route takes none). */
  body: Record<string, unknown>;
}

/** A JSON result with status 200 unless given. */
export function json(body: unknown, status = 200, headers?: Record<string, string>): JsonResult {
  return headers ? { kind: 'json', status, body, headers } : { kind: 'json', status, body };
}
