import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { startChildServer } from '../lib/child-server.js';
import { mergeLoads, type LoadResult } from '../lib/http-load.js';
import type { FloodOrder } from './flood-worker.js';

// bench/flood: does one tenant flooding the API raise another tenant's latency? Tenant B chats at
// a steady, paced rate (open loop: a request every 1/rate s, whatever the answers do) and its
// p50/p95/p99 are measured alone ("quiet") and while tenant A floods chat from many connections
// far above its request rate limit ("flood", mostly 429s). Quiet and flood rounds alternate so
// that drift in a shared machine's speed lands on both. Target: B's flood p99 <= 1.10 x quiet p99.
const quick = process.env['PARLEY_BENCH_QUICK'] === '1';
const roundMs = Number(process.env['PARLEY_BENCH_DURATION_MS'] ?? (quick ? 1000 : 5000));
const rounds = quick ? 2 : 6;
const warmupMs = quick ? 300 : 2000;
const bRate = Number(process.env['PARLEY_FLOOD_B_RPS'] ?? 200);
const floodConnections = Number(process.env['PARLEY_FLOOD_CONNECTIONS'] ?? 64);
const aLimit = Number(process.env['PARLEY_FLOOD_A_RPS'] ?? 100);
const workers = process.env['PARLEY_BENCH_WORKERS'] ?? String(availableParallelism());
const API_KEY = 'prl_flood_bench_key_0123456789abcdef';
const ADMIN_TOKEN = 'flood-bench-operator-token-0123';
const serverScript = new URL('../chat/bench-server.js', import.meta.url);
const greeter = await readFile(new URL('../../../examples/greeter.agent', import.meta.url), 'utf8');

const server = await startChildServer(serverScript, ['parley'], {
  PARLEY_BOOTSTRAP_API_KEY: API_KEY,
  PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
  PARLEY_WORKERS: workers,
  PARLEY_TENANT_RPS: String(aLimit),
});

async function api(method: string, path: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Paced chat of tenant B: `rate` requests per second over keep-alive sockets, each on its own session. */
async function paced(key: string, projectId: string, ms: number, sessions: string[]): Promise<{ result: LoadResult; samples: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const samples: number[] = [];
  let errors = 0;
  let sent = 0;
  const started = performance.now();
  const inflight: Promise<void>[] = [];
  const one = (i: number): Promise<void> =>
    new Promise((resolve) => {
      const sessionId = sessions[i % sessions.length];
      const body = JSON.stringify(sessionId ? { projectId, sessionId, message: 'hi there' } : { projectId, message: 'hi there' });
      const t0 = performance.now();
      const req = request({ host: '127.0.0.1', port: server.port, path: '/api/v1/chat/agent', method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          samples.push(performance.now() - t0);
          if (res.statusCode !== 200) errors++;
          else if (!sessionId) sessions[i % sessions.length] = (JSON.parse(Buffer.concat(parts).toString()) as { sessionId: string }).sessionId;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });
  // Open loop: the schedule does not wait for answers, so a slow server cannot slow the offered load.
  while (performance.now() - started < ms) {
    const due = started + (sent * 1000) / bRate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(one(sent++));
  }
  await Promise.all(inflight);
  agent.destroy();
  samples.sort((a, b) => a - b);
  return { result: mergeLoads([{ result: { requests: samples.length, errors, durationMs: ms, rps: 0, p50: 0, p95: 0, p99: 0, max: 0 }, samples }]), samples };
}

function flood(order: FloodOrder): Promise<{ result: LoadResult; refused: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./flood-worker.js', import.meta.url), { workerData: order });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

const quiet: { result: LoadResult; samples: number[] }[] = [];
const loud: { result: LoadResult; samples: number[] }[] = [];
const floods: { result: LoadResult; refused: number }[] = [];
try {
  const aProject = ((await api('GET', '/api/projects', API_KEY)) as { projects: { id: string }[] }).projects[0]!.id;
  const b = await api('POST', '/api/admin/tenants', ADMIN_TOKEN, { name: 'Tenant B' });
  const bKey: string = b.apiKey.key;
  const bProject: string = b.project.id;
  // B's own limits are generous: the bench measures interference, not B's limiter.
  await api('PUT', `/api/admin/tenants/${b.tenant.id}/limits`, ADMIN_TOKEN, { requestsPerSecond: 100_000, sessionMessagesPerMinute: 1_000_000, activeSessions: 100_000 });
  for (const [key, projectId] of [[API_KEY, aProject], [bKey, bProject]] as const) {
    await api('POST', `/api/projects/${projectId}/agents`, key, { name: 'greeter', dslContent: greeter });
    await api('POST', `/api/projects/${projectId}/agents/greeter/versions`, key);
  }
  const sessions: string[] = Array.from({ length: 32 }, () => '');
  await paced(bKey, bProject, warmupMs, sessions);
  for (let r = 0; r < rounds; r++) {
    quiet.push(await paced(bKey, bProject, roundMs, sessions));
    const flooding = flood({ port: server.port, key: API_KEY, projectId: aProject, connections: floodConnections, durationMs: roundMs + 400 });
    // Let the flood reach full speed before B's round starts; it runs past B's round end.
    await new Promise((res) => setTimeout(res, 200));
    loud.push(await paced(bKey, bProject, roundMs, sessions));
    floods.push(await flooding);
  }
} finally {
  await server.stop();
}

const bQuiet = mergeLoads(quiet);
const bFlood = mergeLoads(loud);
const aRequests = floods.reduce((t, f) => t + f.result.requests, 0);
const aRefused = floods.reduce((t, f) => t + f.refused, 0);
const aDurationS = floods.reduce((t, f) => t + f.result.durationMs, 0) / 1000;
const ratio = (x: number, y: number): number => +(x / y).toFixed(3);
const ratios = { p50: ratio(bFlood.p50, bQuiet.p50), p95: ratio(bFlood.p95, bQuiet.p95), p99: ratio(bFlood.p99, bQuiet.p99) };

const pad = (s: string | number, n: number): string => String(s).padStart(n);
const rows = [`${'tenant B (paced chat)'.padEnd(26)}${pad('requests', 9)}${pad('p50 ms', 9)}${pad('p95 ms', 9)}${pad('p99 ms', 9)}${pad('max ms', 9)}${pad('errors', 8)}`];
for (const [name, r] of [['alone', bQuiet], ['while A floods', bFlood]] as const) {
  rows.push(`${name.padEnd(26)}${pad(r.requests, 9)}${pad(r.p50, 9)}${pad(r.p95, 9)}${pad(r.p99, 9)}${pad(r.max, 9)}${pad(r.errors, 8)}`);
}
console.log(rows.join('\n'));
console.log(`\ntenant A flood: ${floodConnections} connections, ${Math.round(aRequests / aDurationS)} req/s offered, ${Math.round(((aRequests - aRefused) / aDurationS))} req/s admitted (limit ${aLimit}/s), ${aRefused} answered 429`);
console.log(`B flood/alone: p50 x${ratios.p50}, p95 x${ratios.p95}, p99 x${ratios.p99} (target p99 <= x1.10: ${ratios.p99 <= 1.1 ? 'met' : 'NOT met'})`);
mkdirSync(new URL('../../../bench/results/', import.meta.url), { recursive: true });
const out = new URL('../../../bench/results/flood.json', import.meta.url);
writeFileSync(out, JSON.stringify({
  date: new Date().toISOString(), quick, roundMs, rounds, cores: availableParallelism(), node: process.version,
  setup: { bRatePerSecond: bRate, floodConnections, aRequestsPerSecondLimit: aLimit, workers: Number(workers) },
  tenantB: { alone: bQuiet, whileAFloods: bFlood }, tenantA: { requests: aRequests, refused429: aRefused, admittedPerSecond: Math.round((aRequests - aRefused) / aDurationS) },
  ratios, p99Target: 1.1, p99TargetMet: ratios.p99 <= 1.1,
}, null, 2));
console.log(`\nwritten: ${out.pathname}`);
if (bQuiet.errors > 0 || bFlood.errors > 0 || aRefused === 0) {
  console.error('tenant B saw errors, or tenant A was never refused: the bench is not measuring what it should');
  process.exit(1);
}
