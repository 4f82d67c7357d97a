import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { startChildServer, type ChildServer } from '../lib/child-server.js';
import { runChatLoad } from '../lib/chat-load.js';
import { mergeLoads, type LoadResult } from '../lib/http-load.js';

// bench/chat: latency and throughput of POST /api/v1/chat/agent with the greeter agent at 1, 16
// and 64 concurrent clients, next to two baselines measured in the same run: a raw uWS route
// that returns a constant (the ceiling) and Parley's own handlers on node:http in one thread.
// The targets take turns in short rounds (A B C A B C …) so that drift in a shared machine's
// speed lands on all of them alike; each figure merges a target's rounds.
const quick = process.env['PARLEY_BENCH_QUICK'] === '1';
const durationMs = Number(process.env['PARLEY_BENCH_DURATION_MS'] ?? (quick ? 600 : 6000));
const rounds = quick ? 1 : 6;
const warmupMs = quick ? 200 : 1500;
const concurrency = (process.env['PARLEY_BENCH_CONCURRENCY'] ?? '1,16,64').split(',').map(Number);
const API_KEY = 'prl_bench_key_0123456789abcdef';
const serverScript = new URL('./bench-server.js', import.meta.url);
const greeter = await readFile(new URL('../../../examples/greeter.agent', import.meta.url), 'utf8');
const workers = process.env['PARLEY_BENCH_WORKERS'] ?? String(availableParallelism());

interface Target {
  name: string;
  mode: string;
  env?: Record<string, string>;
  chat: boolean;
  server?: ChildServer;
  projectId?: string;
}
// The bench measures the chat path, not the limiter: lift the per-tenant and per-session limits.
const unlimited = { PARLEY_TENANT_RPS: '1000000', PARLEY_SESSION_MESSAGES_PER_MINUTE: '1000000', PARLEY_TENANT_ACTIVE_SESSIONS: '1000000' };
const targets: Target[] = [
  { name: 'uws-constant (ceiling)', mode: 'uws-constant', chat: false },
  { name: 'parley on node:http, 1 thread', mode: 'parley-node-http', env: unlimited, chat: true },
  { name: `parley (uWS, ${workers} workers)`, mode: 'parley', env: { ...unlimited, PARLEY_WORKERS: workers }, chat: true },
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

const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
function load(target: Target, connections: number, ms: number, states: Record<string, unknown>[]) {
  // The uWS constant route ignores the body; the chat targets start one session per client.
  return runChatLoad({ port: target.server!.port, connections, durationMs: ms, states, headers, start: { projectId: target.projectId ?? 'none' }, message: 'hi there' });
}

const report: Record<string, Record<number, LoadResult>> = {};
try {
  for (const target of targets) {
    target.server = await startChildServer(serverScript, [target.mode], { PARLEY_BOOTSTRAP_API_KEY: API_KEY, ...target.env });
    if (target.chat) target.projectId = await prepare(target.server);
    report[target.name] = {};
  }
  const states = new Map(targets.map((t) => [t, Array.from({ length: Math.max(...concurrency) }, () => ({}))]));
  for (const target of targets) await load(target, 16, warmupMs, states.get(target)!);
  for (const c of concurrency) {
    const runs = new Map<Target, Awaited<ReturnType<typeof load>>[]>(targets.map((t) => [t, []]));
    for (let r = 0; r < rounds; r++) for (const target of targets) runs.get(target)!.push(await load(target, c, durationMs / rounds, states.get(target)!));
    for (const target of targets) report[target.name]![c] = mergeLoads(runs.get(target)!);
  }
} finally {
  for (const target of targets) await target.server?.stop();
}

const rows: string[] = [];
const pad = (s: string | number, n: number): string => String(s).padStart(n);
rows.push(`${'target'.padEnd(34)}${pad('clients', 8)}${pad('req/s', 9)}${pad('p50 ms', 9)}${pad('p95 ms', 9)}${pad('p99 ms', 9)}${pad('errors', 8)}`);
for (const [name, byC] of Object.entries(report)) {
  for (const [c, r] of Object.entries(byC)) rows.push(`${name.padEnd(34)}${pad(c, 8)}${pad(r.rps, 9)}${pad(r.p50, 9)}${pad(r.p95, 9)}${pad(r.p99, 9)}${pad(r.errors, 8)}`);
}
const parley = report[targets[2]!.name]!;
const nodeHttp = report[targets[1]!.name]!;
const ceiling = report[targets[0]!.name]!;
const ratio = (a: number, b: number): number => +(a / b).toFixed(2);
const ratios = Object.fromEntries(
  concurrency.map((c) => [c, {
    throughputVsNodeHttp: ratio(parley[c]!.rps, nodeHttp[c]!.rps),
    p95VsNodeHttp: ratio(parley[c]!.p95, nodeHttp[c]!.p95),
    throughputVsCeiling: ratio(parley[c]!.rps, ceiling[c]!.rps),
  }]),
);
console.log(rows.join('\n'));
console.log('\nparley vs baselines:', JSON.stringify(ratios));
mkdirSync(new URL('../../../bench/results/', import.meta.url), { recursive: true });
const out = new URL('../../../bench/results/chat.json', import.meta.url);
writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), quick, durationMs, rounds, cores: availableParallelism(), node: process.version, results: report, ratios }, null, 2));
console.log(`\nwritten: ${out.pathname}`);
const failures = Object.values(report).flatMap((byC) => Object.values(byC)).filter((r) => r.requests === 0 || r.errors > 0);
if (failures.length > 0) {
  console.error('a bench target completed no request or answered errors');
  process.exit(1);
}
