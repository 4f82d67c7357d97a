import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { startChildServer, type ChildServer } from '../lib/child-server.js';
import { runChatLoad } from '../lib/chat-load.js';
import { mergeLoads, type LoadResult } from '../lib/http-load.js';
import { QUOTE_SECRET, scenarios, type TurnScenario } from './bench-agents.js';
import { measureSandboxOverhead } from './sandbox-overhead.js';

// bench/agents: latency per chat turn (POST /api/v1/chat/agent) of the agent runtime's kinds of
// turn, next to the greeter measured in the same run: a GATHER completed in one message, an HTTP
// tool against a local API in this process, a CODE tool in the sandbox, and a fan-out to 4
// delegates, each at 1 and 8 concurrent clients (each client keeps one session per scenario).
// The scenarios take turns in short rounds so that drift on a shared machine lands on all alike.
// Then, with the server stopped, the sandbox's per-call overhead next to a direct function call.
const quick = process.env['PARLEY_BENCH_QUICK'] === '1';
const durationMs = Number(process.env['PARLEY_BENCH_DURATION_MS'] ?? (quick ? 300 : 4000));
const rounds = quick ? 1 : 4;
const warmupMs = quick ? 150 : 1000;
const sandboxTimeMs = quick ? 300 : 2000;
const concurrency = (process.env['PARLEY_BENCH_CONCURRENCY'] ?? '1,8').split(',').map(Number);
const workers = process.env['PARLEY_BENCH_WORKERS'] ?? String(availableParallelism());
const API_KEY = 'prl_bench_key_0123456789abcdef';
const serverScript = new URL('../chat/bench-server.js', import.meta.url);
const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

/** A local HTTP server standing in for the third-party API of the HTTP tool scenario. */
async function startQuoteApi(): Promise<{ server: Server; base: string; calls: () => number; unauthorized: () => number }> {
  let calls = 0;
  let unauthorized = 0;
  const server = createServer((req, res) => {
    calls++;
    req.resume();
    req.on('end', () => {
      if (req.headers['authorization'] !== `Bearer ${QUOTE_SECRET.value}`) {
        unauthorized++;
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
        return;
      }
      const symbol = decodeURIComponent((req.url ?? '').split('/').pop() ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ symbol, price: 12.5 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { server, base: `http://127.0.0.1:${port}`, calls: () => calls, unauthorized: () => unauthorized };
}

async function api(port: number, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Creates and compiles every scenario's agents and the HTTP tool's secret; returns the project id. */
async function prepare(server: ChildServer, all: TurnScenario[]): Promise<string> {
  const { projects } = (await api(server.port, 'GET', '/api/projects')) as { projects: { id: string }[] };
  const projectId = projects[0]!.id;
  for (const s of all) {
    for (const agent of s.agents) {
      await api(server.port, 'POST', `/api/projects/${projectId}/agents`, { name: agent.name, dslContent: agent.source });
      await api(server.port, 'POST', `/api/projects/${projectId}/agents/${agent.name}/versions`);
    }
  }
  await api(server.port, 'POST', '/api/tool-secrets', { projectId, ...QUOTE_SECRET });
  // One checked turn per scenario before any timing: a wrong answer stops the bench here.
  for (const s of all) {
    const reply = (await api(server.port, 'POST', '/api/v1/chat/agent', { projectId, agentName: s.entry, message: s.message })) as { response: string };
    if (reply.response !== s.expect) throw new Error(`${s.name}: expected ${JSON.stringify(s.expect)}, got ${JSON.stringify(reply.response)}`);
  }
  return projectId;
}

type Measured = LoadResult & { wrong: number };
const wrong = new Map<TurnScenario, number>();

function load(port: number, projectId: string, s: TurnScenario, connections: number, ms: number, states: Record<string, unknown>[]) {
  return runChatLoad({
    port, connections, durationMs: ms, states, headers, start: { projectId, agentName: s.entry }, message: s.message,
    // A 200 with the wrong answer (a failed tool, a failed delegate) must not pass as a fast turn.
    onReply: (reply) => {
      if (reply.response !== s.expect) wrong.set(s, (wrong.get(s) ?? 0) + 1);
    },
  });
}

const quoteApi = await startQuoteApi();
const all = scenarios(quoteApi.base);
const report: Record<string, Record<number, Measured>> = {};
let server: ChildServer | undefined;
try {
  server = await startChildServer(serverScript, ['parley'], {
    PARLEY_BOOTSTRAP_API_KEY: API_KEY,
    PARLEY_WORKERS: workers,
    PARLEY_TOOLS_ALLOW_PRIVATE: 'true',
    PARLEY_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    // The bench measures turns, not the rate limits (bench/flood does).
    PARLEY_TENANT_RPS: '1000000',
    PARLEY_SESSION_MESSAGES_PER_MINUTE: '1000000',
  });
  const projectId = await prepare(server, all);
  const states = new Map(all.map((s) => [s, Array.from({ length: Math.max(...concurrency) }, () => ({}))]));
  for (const s of all) await load(server.port, projectId, s, Math.max(...concurrency), warmupMs, states.get(s)!);
  wrong.clear();
  for (const c of concurrency) {
    const runs = new Map<TurnScenario, Awaited<ReturnType<typeof load>>[]>(all.map((s) => [s, []]));
    const wrongBefore = new Map(all.map((s) => [s, wrong.get(s) ?? 0]));
    for (let r = 0; r < rounds; r++) for (const s of all) runs.get(s)!.push(await load(server.port, projectId, s, c, durationMs / rounds, states.get(s)!));
    for (const s of all) (report[s.name] ??= {})[c] = { ...mergeLoads(runs.get(s)!), wrong: (wrong.get(s) ?? 0) - wrongBefore.get(s)! };
  }
} finally {
  await server?.stop();
  await new Promise((resolve) => quoteApi.server.close(resolve));
}

// The server is gone: the sandbox measurement has both cores to itself.
const sandbox = await measureSandboxOverhead(sandboxTimeMs);

const pad = (s: string | number, n: number): string => String(s).padStart(n);
const baseline = report[all[0]!.name]!;
const ratio = (a: number, b: number): number => +(a / b).toFixed(2);
const vsGreeter = Object.fromEntries(Object.entries(report).map(([name, byC]) => [name, Object.fromEntries(concurrency.map((c) => [c, { p50: ratio(byC[c]!.p50, baseline[c]!.p50), p95: ratio(byC[c]!.p95, baseline[c]!.p95) }]))]));
const rows: string[] = [];
rows.push(`${'turn'.padEnd(28)}${pad('clients', 8)}${pad('req/s', 8)}${pad('p50 ms', 9)}${pad('p95 ms', 9)}${pad('p99 ms', 9)}${pad('p50 xG', 8)}${pad('p95 xG', 8)}${pad('errors', 8)}${pad('wrong', 7)}`);
for (const [name, byC] of Object.entries(report)) {
  for (const c of concurrency) {
    const r = byC[c]!;
    const x = vsGreeter[name]![c]!;
    rows.push(`${name.padEnd(28)}${pad(c, 8)}${pad(r.rps, 8)}${pad(r.p50, 9)}${pad(r.p95, 9)}${pad(r.p99, 9)}${pad(x.p50, 8)}${pad(x.p95, 8)}${pad(r.errors, 8)}${pad(r.wrong, 7)}`);
  }
}
console.log(rows.join('\n'));
console.log('(xG: the turn\'s latency divided by the greeter\'s at the same concurrency, same run)');
console.log(`\nCODE tool call, in this process (tinybench, ${sandboxTimeMs} ms each):`);
console.log(`${'call'.padEnd(28)}${pad('samples', 9)}${pad('p50 ms', 11)}${pad('p95 ms', 11)}${pad('p99 ms', 11)}`);
for (const [name, r] of [['direct function call', sandbox.direct], ['CodeSandbox.run', sandbox.sandbox]] as const) {
  console.log(`${name.padEnd(28)}${pad(r.samples, 9)}${pad(r.p50, 11)}${pad(r.p95, 11)}${pad(r.p99, 11)}`);
}
console.log(`sandbox / direct: p50 x${sandbox.ratio.p50}, p95 x${sandbox.ratio.p95}`);
console.log(`local API calls: ${quoteApi.calls()} (${quoteApi.unauthorized()} without the secret header)`);

mkdirSync(new URL('../../../bench/results/', import.meta.url), { recursive: true });
const out = new URL('../../../bench/results/agents.json', import.meta.url);
writeFileSync(out, JSON.stringify({
  date: new Date().toISOString(), quick, durationMs, rounds, workers: Number(workers), cores: availableParallelism(), node: process.version,
  turns: report, vsGreeter, sandbox,
}, null, 2));
console.log(`\nwritten: ${out.pathname}`);
const failures = Object.values(report).flatMap((byC) => Object.values(byC)).filter((r) => r.requests === 0 || r.errors > 0 || r.wrong > 0);
if (failures.length > 0 || quoteApi.unauthorized() > 0) {
  console.error('a scenario completed no turn, answered errors or answered wrongly');
  process.exit(1);
}
