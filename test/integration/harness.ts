import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig, type Config } from '../../runtime/index.js';
import { startParley, type Parley } from '../../gateway/server.js';

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
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
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
