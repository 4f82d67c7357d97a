import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig, type Config } from '../../runtime/index.js';
import { startParley, type Parley } from '../../gateway/server.js';
import { jsonOrText } from '../fixtures/json-or-text.js';

/** The bootstrap admin key every test server starts with. */
export const ADMIN_KEY = 'prl_test_admin_key_0123456789abcdef';
/** The operator token of test servers. */
export const ADMIN_TOKEN = 'test-operator-token-0123456789';

/** A real Parley on a loopback port with a real LMDB in a temp folder. */
export interface TestServer {
  parley: Parley;
  base: string;
  projectId: string;
  dataDir: string;
  config: Config;
  /** Stops the server (keeps the data folder: use for restart tests). */
  stop(): Promise<void>;
  /** Stops the server and removes its data folder. */
  close(): Promise<void>;
}

/** Starts a server; `env` overrides PARLEY_* variables; `dataDir` reuses a folder (restarts). */
export async function startTestServer(options: { env?: Record<string, string>; dataDir?: string } = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'parley-test-'));
  const config = loadConfig({
    PARLEY_PORT: '0',
    PARLEY_HOST: '127.0.0.1',
    PARLEY_DATA_DIR: dataDir,
    PARLEY_WORKERS: '2',
    PARLEY_BOOTSTRAP_API_KEY: ADMIN_KEY,
    PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
    PARLEY_LOG_LEVEL: 'silent',
    ...options.env,
  });
  const parley = await startParley(config, createLogger(config.logLevel));
  const base = `http://127.0.0.1:${parley.port}`;
  const projects = (await (await fetch(`${base}/api/projects`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as { projects: { id: string }[] };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await parley.close();
  };
  return {
    parley, base, dataDir, config, projectId: projects.projects[0]!.id, stop,
    close: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A response with its parsed JSON body (undefined when not JSON). */
export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** Calls the API with a credential (`prl_` key or JWT) and a JSON body. */
export async function call(base: string, method: string, path: string, options: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? ADMIN_KEY : options.key;
  if (key !== null) headers['authorization'] = `Bearer ${key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  return { status: res.status, headers: res.headers, body: jsonOrText(await res.text()) };
}

/** The text of examples/<name>.agent. */
export function example(name: string): string {
  return readFileSync(new URL(`../../../examples/${name}.agent`, import.meta.url), 'utf8');
}

/** Creates and compiles an agent from examples/ (or from `source`) in a project. */
export async function deployAgent(server: TestServer, name: string, options: { source?: string; projectId?: string; key?: string } = {}): Promise<void> {
  const projectId = options.projectId ?? server.projectId;
  const created = await call(server.base, 'POST', `/api/projects/${projectId}/agents`, { key: options.key, body: { name, dslContent: options.source ?? example(name) } });
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  const compiled = await call(server.base, 'POST', `/api/projects/${projectId}/agents/${name}/versions`, { key: options.key });
  if (compiled.status !== 201) throw new Error(`compile ${name}: ${compiled.status} ${JSON.stringify(compiled.body)}`);
}

/** Creates every agent first, then compiles them, so agents that name each other compile. */
export async function deployAgents(server: TestServer, names: string[], options: { projectId?: string; key?: string } = {}): Promise<void> {
  const projectId = options.projectId ?? server.projectId;
  for (const name of names) {
    const created = await call(server.base, 'POST', `/api/projects/${projectId}/agents`, { key: options.key, body: { name, dslContent: example(name) } });
    if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  }
  for (const name of names) {
    const compiled = await call(server.base, 'POST', `/api/projects/${projectId}/agents/${name}/versions`, { key: options.key });
    if (compiled.status !== 201) throw new Error(`compile ${name}: ${compiled.status} ${JSON.stringify(compiled.body)}`);
  }
}

/** Reads an SSE response into its events and comments. */
export async function readSse(res: Response): Promise<{ events: { event: string; data: any }[]; comments: string[] }> {
  const text = await res.text();
  const events: { event: string; data: any }[] = [];
  const comments: string[] = [];
  for (const block of text.split('\n\n')) {
    if (!block.trim()) continue;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments.push(line.slice(1).trim());
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length) events.push({ event, data: JSON.parse(data.join('\n')) });
  }
  return { events, comments };
}

// ---------------------------------------------------------------------------------------------
// Helpers added for the integration suite (the exports above are unchanged).
// ---------------------------------------------------------------------------------------------

/** Asserts the spec's error envelope: status, code, a non-empty message, and the request id of the X-Request-Id header. */
export function assertError(res: ApiResponse, status: number, code: string, message?: RegExp): void {
  const detail = `${res.status} ${JSON.stringify(res.body)}`;
  if (res.status !== status) throw new Error(`expected status ${status}, got ${detail}`);
  const body = res.body as { success?: unknown; error?: { code?: unknown; message?: unknown; requestId?: unknown } } | undefined;
  if (!body || typeof body !== 'object') throw new Error(`expected a JSON envelope, got ${detail}`);
  if (body.success !== false) throw new Error(`expected success:false, got ${detail}`);
  const error = body.error;
  if (!error || typeof error !== 'object') throw new Error(`expected an error object, got ${detail}`);
  if (error.code !== code) throw new Error(`expected code ${code}, got ${detail}`);
  if (typeof error.message !== 'string' || error.message.length === 0) throw new Error(`expected a message, got ${detail}`);
  if (message && !message.test(error.message)) throw new Error(`expected message ${message}, got ${detail}`);
  const headerId = res.headers.get('x-request-id');
  if (typeof error.requestId !== 'string' || error.requestId.length === 0) throw new Error(`expected a requestId, got ${detail}`);
  if (headerId !== error.requestId) throw new Error(`requestId ${String(error.requestId)} differs from X-Request-Id ${String(headerId)}`);
}

/** A tenant made through the operator API: its default project and its admin key. */
export interface TestTenant {
  tenantId: string;
  projectId: string;
  key: string;
  keyId: string;
}

/** Creates a tenant through POST /api/admin/tenants (the server must have ADMIN_TOKEN). */
export async function createTenant(server: TestServer, name: string): Promise<TestTenant> {
  const res = await call(server.base, 'POST', '/api/admin/tenants', { key: ADMIN_TOKEN, body: { name } });
  if (res.status !== 201) throw new Error(`create tenant: ${res.status} ${JSON.stringify(res.body)}`);
  return { tenantId: res.body.tenant.id, projectId: res.body.project.id, key: res.body.apiKey.key, keyId: res.body.apiKey.id };
}

/** One chat turn through POST /api/v1/chat/send (or another chat endpoint); throws unless 200. */
export async function chat(server: TestServer, body: Record<string, unknown>, options: { key?: string; endpoint?: 'send' | 'agent' } = {}): Promise<{ sessionId: string; response: string; traceEvents: { type: string; data: any }[]; agentName: string; body: any }> {
  const res = await call(server.base, 'POST', `/api/v1/chat/${options.endpoint ?? 'send'}`, { key: options.key, body });
  if (res.status !== 200) throw new Error(`chat: ${res.status} ${JSON.stringify(res.body)}`);
  return { sessionId: res.body.sessionId, response: res.body.response, traceEvents: res.body.traceEvents, agentName: res.body.agentName, body: res.body };
}

/** A raw HTTP exchange over node:http (for bodies fetch cannot send: chunked, oversized, odd headers). */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/**
 * Sends a request with node:http. `chunks` are written one by one (with `transfer-encoding:
 * chunked` unless a content-length header is given). Resolves with the response even when the
 * server answers before the whole body was sent (errors writing the rest are expected then).
 */
export async function rawRequest(base: string, options: { method: string; path: string; headers?: Record<string, string>; chunks?: (string | Buffer)[] }): Promise<RawResponse> {
  const { request } = await import('node:http');
  const url = new URL(options.path, base);
  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false;
    const req = request(url, { method: options.method, headers: options.headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      const done = (): void => {
        if (settled) return;
        settled = true;
        const text = Buffer.concat(parts).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: jsonOrText(text) });
        req.destroy();
      };
      res.on('end', done);
      res.on('aborted', done);
      res.on('error', done);
    });
    req.on('error', (err) => {
      // The server may answer (413) and close while the body is still being written.
      if (!settled) setTimeout(() => !settled && ((settled = true), reject(err)), 200);
    });
    const chunks = options.chunks ?? [];
    const writeNext = (i: number): void => {
      if (settled || req.destroyed) return;
      if (i >= chunks.length) {
        req.end();
        return;
      }
      const ok = req.write(chunks[i]!);
      if (ok) setImmediate(() => writeNext(i + 1));
      else req.once('drain', () => writeNext(i + 1));
    };
    writeNext(0);
  });
}

/** A TCP port that was free a moment ago (for child processes that must be told their port). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
