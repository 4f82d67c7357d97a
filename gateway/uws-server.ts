import uWS from 'uWebSockets.js';
import type { Logger } from '../runtime/index.js';
import type { GatewayApp } from './app.js';
import { errorResult } from './error-status.js';
import type { HttpRequest, HttpResult, StreamSink } from './http.js';
import { BODY_LIMIT } from './json-body.js';
import { requestIdFrom } from './request-id.js';
import { statusLine } from './status-text.js';

const NO_BODY = Buffer.alloc(0);
const JSON_TYPE = 'application/json; charset=utf-8';

/** A listening uWS server; close() is idempotent. */
export interface UwsServer {
  readonly port: number;
  close(): void;
}

/**
 * Serves a GatewayApp with uWebSockets.js. Everything uWS needs is honoured here: headers are
 * read before the first await, every response checks for abort, writes after an await are corked,
 * and bodies are counted while they arrive (413 as soon as they pass the route's limit).
 */
export function listenUws(app: GatewayApp, options: { host: string; port: number; log: Logger; accessLog: boolean }): Promise<UwsServer> {
  const server = uWS.App();
  server.any('/*', (res, req) => {
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const queryText = req.getQuery() ?? '';
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = v;
    });
    const requestId = requestIdFrom(headers['x-request-id']);
    const state = { aborted: false, onAbort: undefined as (() => void) | undefined };
    res.onAborted(() => {
      state.aborted = true;
      state.onAbort?.();
    });
    const started = options.accessLog ? performance.now() : 0;
    const finish = (result: HttpResult): void => {
      if (state.aborted) return;
      if (options.accessLog) options.log.info('request', { requestId, method, path, status: result.status, ms: +(performance.now() - started).toFixed(2) });
      if (result.kind === 'json') writeJson(res, result.status, result.headers, result.body, requestId);
      else startStream(res, result, requestId, state);
    };
    const match = app.match(method, path);
    const limit = match?.route.bodyLimit ?? BODY_LIMIT;
    const tooLarge = (): void => {
      if (state.aborted) return;
      state.aborted = true;
      const r = errorResult({ code: 'PAYLOAD_TOO_LARGE', message: `Request body is larger than ${limit} bytes` }, requestId);
      res.cork(() => {
        res.writeStatus(statusLine(413)).writeHeader('content-type', JSON_TYPE).writeHeader('x-request-id', requestId).end(JSON.stringify(r.body), true);
      });
    };
    const run = (body: Buffer): void => {
      const request: HttpRequest = { method, path, query: new URLSearchParams(queryText), headers, body, requestId };
      app.dispatch(request, match).then(finish, (err: unknown) => finish(app.errorOf(err, request)));
    };

    if (method === 'GET' || method === 'HEAD' || !match) {
      run(NO_BODY);
      return;
    }
    const declared = headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      tooLarge();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (state.aborted) return;
      size += chunk.byteLength;
      if (size > limit) {
        tooLarge();
        return;
      }
      // uWS reuses the chunk's memory after this callback returns: copy it.
      if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk).slice()));
      if (isLast) run(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
  });

  return new Promise((resolve, reject) => {
    server.listen(options.host, options.port, (socket) => {
      if (!socket) {
        reject(new Error(`Could not listen on ${options.host}:${options.port} (port in use or host not local?)`));
        return;
      }
      let closed = false;
      resolve({
        port: uWS.us_socket_local_port(socket),
        close: () => {
          if (closed) return;
          closed = true;
          uWS.us_listen_socket_close(socket);
          // Also drop open keep-alive connections: nothing may be served after close (the store
          // is closed next), and the process can exit without waiting for clients to hang up.
          // App.close() exists in this uWS build but is missing from its typings.
          (server as unknown as { close?: () => void }).close?.();
        },
      });
    });
  });
}

function writeJson(res: uWS.HttpResponse, status: number, headers: Record<string, string> | undefined, body: unknown, requestId: string): void {
  const text = JSON.stringify(body);
  res.cork(() => {
    res.writeStatus(statusLine(status));
    res.writeHeader('content-type', JSON_TYPE);
    res.writeHeader('x-request-id', requestId);
    if (headers) for (const k in headers) res.writeHeader(k, headers[k]!);
    res.end(text);
  });
}

function startStream(res: uWS.HttpResponse, result: Extract<HttpResult, { kind: 'stream' }>, requestId: string, state: { aborted: boolean; onAbort: (() => void) | undefined }): void {
  let ended = false;
  const closeListeners: (() => void)[] = [];
  state.onAbort = () => {
    for (const l of closeListeners.splice(0)) l();
  };
  res.cork(() => {
    res.writeStatus(statusLine(result.status));
    res.writeHeader('x-request-id', requestId);
    for (const k in result.headers) res.writeHeader(k, result.headers[k]!);
  });
  const sink: StreamSink = {
    write(chunk) {
      if (state.aborted || ended) return false;
      // Backpressure: uWS buffers what the socket cannot take yet; SSE chunks are small.
      res.cork(() => res.write(chunk));
      return true;
    },
    end() {
      if (state.aborted || ended) return;
      ended = true;
      res.cork(() => res.end());
    },
    onClose(listener) {
      closeListeners.push(listener);
    },
    get closed() {
      return state.aborted || ended;
    },
  };
  result.start(sink);
}
