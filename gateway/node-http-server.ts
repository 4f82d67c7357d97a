import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayApp } from './app.js';
import { errorResult } from './error-status.js';
import type { HttpRequest, HttpResult, StreamSink } from './http.js';
import { BODY_LIMIT } from './json-body.js';
import { requestIdFrom } from './request-id.js';

/**
 * Serves a GatewayApp with node:http. Parley runs on uWS; this adapter exists so that benches can
 * measure the same handlers on a conventional server in the same run.
 */
export function listenNodeHttp(app: GatewayApp, options: { host: string; port: number }): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => handle(app, req, res));
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        server,
        close: () => new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
      });
    });
  });
}

function handle(app: GatewayApp, req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const method = (req.method ?? 'GET').toUpperCase();
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
  const requestId = requestIdFrom(headers['x-request-id']);
  const match = app.match(method, path);
  const limit = match?.route.bodyLimit ?? BODY_LIMIT;
  const chunks: Buffer[] = [];
  let size = 0;
  let rejected = false;
  req.on('data', (chunk: Buffer) => {
    if (rejected) return;
    size += chunk.length;
    if (size > limit) {
      rejected = true;
      write(res, errorResult({ code: 'PAYLOAD_TOO_LARGE', message: `Request body is larger than ${limit} bytes` }, requestId), requestId);
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (rejected) return;
    const request: HttpRequest = { method, path, query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)), headers, body: Buffer.concat(chunks, size), requestId };
    app.dispatch(request, match).then((r) => write(res, r, requestId), (err: unknown) => write(res, app.errorOf(err, request), requestId));
  });
}

function write(res: ServerResponse, result: HttpResult, requestId: string): void {
  if (res.destroyed) return;
  if (result.kind === 'json') {
    const text = JSON.stringify(result.body);
    res.writeHead(result.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'x-request-id': requestId, ...result.headers });
    res.end(text);
    return;
  }
  res.writeHead(result.status, { 'x-request-id': requestId, ...result.headers });
  let ended = false;
  const sink: StreamSink = {
    write: (chunk) => (res.destroyed || ended ? false : (res.write(chunk), true)),
    end: () => {
      if (!ended) {
        ended = true;
        res.end();
      }
    },
    onClose: (l) => res.on('close', () => !ended && l()),
    get closed() {
      return res.destroyed || ended;
    },
  };
  result.start(sink);
}
