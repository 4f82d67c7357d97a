import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { startChildServer, type ChildServer } from '../lib/child-server.js';
import { runLoad, type LoadResult } from '../lib/http-load.js';

// bench/chat: latency and throughput of POST /api/v1/chat/agent with the greeter agent at 1, 16
// and 64 concurrent clients, next to two baselines measured in the same run: a raw uWS route
// that returns a constant (the ceiling) and Parley's own handlers on node:http in one thread.
const quick = process.env['PARLEY_BENCH_QUICK'] === '1';
const durationMs = Number(process.env['PARLEY_BENCH_DURATION_MS'] ?? (quick ? 500 : 5000));
const warmupMs = quick ? 200 : 1500;
const concurrency = (process.env['PARLEY_BENCH_CONCURRENCY'] ?? '1,16,64').split(',').map(Number);
const API_KEY = 'prl_bench_key_0123456789abcdef';
const serverScript = new URL('./bench-server.js', import.meta.url);
const greeter = await readFile(new URL('../../../examples/greeter.agent', import.meta.url), 'utf8');

interface Target {
  name: string;
  mode: string;
  env?: Record<string, string>;
  chat: boolean;
}
const workers = process.env['PARLEY_BENCH_WORKERS'] ?? String(availableParallelism());
const targets: Target[] = [
  { name: 'uws-constant (ceiling)', mode: 'uws-constant', chat: false },
  { name: 'parley on node:http, 1 thread', mode: 'parley-node-http', chat: true },
  { name: `parley (uWS, ${workers} workers)`, mode: 'parley', env: { PARLEY_WORKERS: workers }, chat: true },
];

async function api(port: number, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Creates and compiles the greeter in the server's default project; returns the project id. */
async function prepare(server: ChildServer): Promise<string> {
  const { projects } = (await api(server.port, 'GET', '/api/projects')) as { projects: { id: string }[] };
  const projectId = projects[0]!.id;
  await api(server.port, 'POST', `/api/projects/${projectId}/agents`, { name: 'greeter', dslContent: greeter });
  await api(server.port, 'POST', `/api/projects/${projectId}/agents/greeter/versions`);
  return projectId;
}

async function measure(target: Target): Promise<Record<number, LoadResult>> {
  const server = await startChildServer(serverScript, [target.mode], { PARLEY_BOOTSTRAP_API_KEY: API_KEY, ...target.env });
  try {
    const projectId = target.chat ? await prepare(server) : 'none';
    const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
    const load = (connections: number, ms: number) =>
      runLoad({
        port: server.port,
        connections,
        durationMs: ms,
        // Each client keeps one session going, as a user in a conversation would.
        request: (_c, state) => ({
          method: 'POST',
          path: '/api/v1/chat/agent',
          headers,
          body: JSON.stringify(state['sessionId'] ? { projectId, sessionId: state['sessionId'], message: 'hi there' } : { projectId, message: 'hi there' }),
        }),
        onResponse: (_c, state, status, body) => {
          if (status === 200 && !state['sessionId']) state['sessionId'] = (JSON.parse(body) as { sessionId: string }).sessionId;
        },
      });
    await load(16, warmupMs);
    const results: Record<number, LoadResult> = {};
    for (const c of concurrency) results[c] = await load(c, durationMs);
    return results;
  } finally {
    await server.stop();
  }
}

const report: Record<string, Record<number, LoadResult>> = {};
for (const target of targets) report[target.name] = await measure(target);

const rows: string[] = [];
const pad = (s: string | number, n: number): string => String(s).padStart(n);
rows.push(`${'target'.padEnd(34)}${pad('clients', 8)}${pad('req/s', 9)}${pad('p50 ms', 9)}${pad('p95 ms', 9)}${pad('p99 ms', 9)}${pad('errors', 8)}`);
for (const [name, byC] of Object.entries(report)) {
  for (const [c, r] of Object.entries(byC)) rows.push(`${name.padEnd(34)}${pad(c, 8)}${pad(r.rps, 9)}${pad(r.p50, 9)}${pad(r.p95, 9)}${pad(r.p99, 9)}${pad(r.errors, 8)}`);
}
const parley = report[targets[2]!.name]!;
const nodeHttp = report[targets[1]!.name]!;
const ratios = Object.fromEntries(concurrency.map((c) => [c, { throughputVsNodeHttp: +(parley[c]!.rps / nodeHttp[c]!.rps).toFixed(2), p95VsNodeHttp: +(parley[c]!.p95 / nodeHttp[c]!.p95).toFixed(2) }]));
console.log(rows.join('\n'));
console.log('\nparley / node:http:', JSON.stringify(ratios));
mkdirSync(new URL('../../../bench/results/', import.meta.url), { recursive: true });
const out = new URL('../../../bench/results/chat.json', import.meta.url);
writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), quick, durationMs, cores: availableParallelism(), node: process.version, results: report, ratios }, null, 2));
console.log(`\nwritten: ${out.pathname}`);
const failures = Object.values(report).flatMap((byC) => Object.values(byC)).filter((r) => r.requests === 0);
if (failures.length > 0) {
  console.error('a bench target completed no request');
  process.exit(1);
}
