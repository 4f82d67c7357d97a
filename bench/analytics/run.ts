import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EventIdGenerator, EventStore, openAnalyticsStore, type AnalyticsEvent, type RecorderStats } from '../../actors/index.js';
import { runChatLoad } from '../lib/chat-load.js';
import { mergeLoads, type LoadResult } from '../lib/http-load.js';
import { syntheticEvent } from './synthetic-events.js';

// bench/analytics: (1) with 1M events over the last 24 hours in the store, the latency of
// GET …/analytics/metrics grouped by agent_name and hour with every metric (p95 included) and of
// a default GET …/analytics/events page, both over HTTP; (2) chat p95 with and without 50,000
// analytics events per second recorded inside the server, in alternating rounds of one run.
// PARLEY_BENCH_QUICK=1: 100k events and short rounds. PARLEY_BENCH_EVENTS overrides the event count;
// PARLEY_BENCH_WRITER=discard records without writing (bench-server.ts says why).
const quick = process.env['PARLEY_BENCH_QUICK'] === '1';
const EVENTS = Number(process.env['PARLEY_BENCH_EVENTS'] ?? (quick ? 100_000 : 1_000_000));
const RATE = Number(process.env['PARLEY_BENCH_RATE'] ?? 50_000);
const rounds = quick ? 2 : 5;
const roundMs = quick ? 1500 : 4000;
// Longer than the recorder's flush interval (one second), so the round sees steady state.
const warmUpMs = quick ? 1200 : 2500;
const queryRuns = quick ? 5 : 20;
const CHAT_CLIENTS = 16;
const API_KEY = 'prl_bench_key_0123456789abcdef';
const TARGETS = { metricsMs: 300, eventsPageMs: 20, eventsPerSecond: 50_000, chatP95Increase: 0.1 };
const greeter = await readFile(new URL('../../../examples/greeter.agent', import.meta.url), 'utf8');
const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

// The server under test, with an IPC channel to switch its event generator on and off.
const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-analytics-'));
const child = spawn(process.execPath, [new URL('./bench-server.js', import.meta.url).pathname], {
  env: {
    ...process.env, PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: 'error', PARLEY_BOOTSTRAP_API_KEY: API_KEY, PARLEY_TENANT_RPS: '1000000',
    PARLEY_SESSION_MESSAGES_PER_MINUTE: '1000000', PARLEY_WORKERS: process.env['PARLEY_BENCH_WORKERS'] ?? String(availableParallelism()),
  },
  stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
});
const replies: ((msg: unknown) => void)[] = [];
child.on('message', (msg) => replies.shift()?.(msg));
const ask = <T>(msg: unknown): Promise<T> => new Promise((resolve) => { replies.push(resolve as (m: unknown) => void); child.send(msg as object); });

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

function stats(samples: number[]): { p50: number; p95: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number): number => +s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!.toFixed(2);
  return { p50: at(0.5), p95: at(0.95), max: +s[s.length - 1]!.toFixed(2) };
}

async function timeGet(path: string, runs: number): Promise<{ samples: number[]; body: any }> {
  const samples: number[] = [];
  let body: any;
  for (let i = 0; i < runs + 2; i++) {
    const t = performance.now();
    body = await api('GET', path);
    if (i >= 2) samples.push(performance.now() - t); // two warm-up calls
  }
  return { samples, body };
}

const port = await new Promise<number>((resolve, reject) => {
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const msg = JSON.parse(line) as { port?: number };
      if (typeof msg.port === 'number') resolve(msg.port);
    } catch {
      // not our line
    }
  });
  child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
});

try {
  const { projects } = await api('GET', '/api/projects');
  const { id: projectId, tenantId } = projects[0] as { id: string; tenantId: string };
  await api('POST', `/api/projects/${projectId}/agents`, { name: 'greeter', dslContent: greeter });
  await api('POST', `/api/projects/${projectId}/agents/greeter/versions`);

  // 1. Load the store from this process (LMDB is multi-process), spread over the last 24 hours.
  const store = openAnalyticsStore({ dataDir, durability: 'commit' });
  const events = new EventStore(store, { retentionDays: 30 });
  const ids = new EventIdGenerator();
  const end = Date.now();
  const step = (24 * 3_600_000 - 60_000) / EVENTS;
  const loadStart = performance.now();
  for (let i = 0; i < EVENTS; i += 5000) {
    const batch: AnalyticsEvent[] = [];
    for (let j = i; j < Math.min(EVENTS, i + 5000); j++) {
      const ts = Math.floor(end - 24 * 3_600_000 + 30_000 + j * step);
      batch.push({ ...syntheticEvent(tenantId, projectId, j, ts), id: ids.next(ts) });
    }
    await events.write(batch);
  }
  const bulkLoadPerSecond = Math.round(EVENTS / ((performance.now() - loadStart) / 1000));
  // As the server's writer thread would, fold the session index of the loaded (closed) minutes.
  await events.compactSessions();
  await store.close();

  // 2. Query latency over HTTP.
  const base = `/api/projects/${projectId}/analytics`;
  const metrics = await timeGet(`${base}/metrics?groupBy=agent_name,hour&metrics=count,avg_duration,error_rate,p95_duration,sum_tokens,sum_cost`, queryRuns);
  const counted = (metrics.body.data.buckets as { count: number }[]).reduce((s, b) => s + b.count, 0);
  if (counted < EVENTS * 0.99) throw new Error(`metrics counted ${counted} of ${EVENTS} events`);
  const page = await timeGet(`${base}/events`, queryRuns * 2);
  if (page.body.data.events.length !== 100 || page.body.data.total < EVENTS * 0.99) throw new Error(`events page: ${page.body.data.events.length} events, total ${page.body.data.total}`);
  const filteredPage = await timeGet(`${base}/events?category=llm&agentName=agent_3&limit=100&offset=200`, queryRuns);

  // 3. Chat p95 without and with recording, alternating rounds so drift lands on both.
  const states = Array.from({ length: CHAT_CLIENTS }, () => ({}) as Record<string, unknown>);
  const chatLoad = (ms: number) => runChatLoad({ port, connections: CHAT_CLIENTS, durationMs: ms, states, headers, start: { projectId }, message: 'hi there' });
  await chatLoad(quick ? 300 : 1500);
  const baseline: Awaited<ReturnType<typeof chatLoad>>[] = [];
  const recording: Awaited<ReturnType<typeof chatLoad>>[] = [];
  // Sustained rate: events taken in during the round (the generator offers RATE; timer rounding
  // takes up to 1% off), provided none were dropped and the backlog
  // (queued plus waiting for their commit) never exceeded 1.5 s of events, i.e. the writer kept
  // pace within one commit. Committed-in-window is reported too; it swings by one commit a round.
  const inPipeline = (s: RecorderStats): number => s.recorded + s.writing + s.queued;
  let accepted = 0;
  let recorded = 0;
  let dropped = 0;
  let maxBacklog = 0;
  let recordMs = 0;
  type Snapshot = { stats?: RecorderStats; cpu: NodeJS.CpuUsage; gatewayElu: EventLoopUtilization };
  const snapshot = (): Promise<Snapshot> => ask<Snapshot>({ stats: true });
  // Server CPU (ms per second, all threads) and gateway thread utilisation over a window.
  const cpu = { baseline: { ms: 0, busy: 0, idle: 0, wall: 0 }, recording: { ms: 0, busy: 0, idle: 0, wall: 0 } };
  const measured = async <L>(into: typeof cpu.baseline, run: () => Promise<L>): Promise<{ load: L; before: Snapshot; after: Snapshot; ms: number }> => {
    const before = await snapshot();
    const t = performance.now();
    const load = await run();
    const after = await snapshot();
    const ms = performance.now() - t;
    into.ms += (after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / 1000;
    into.busy += after.gatewayElu.active - before.gatewayElu.active;
    into.idle += after.gatewayElu.idle - before.gatewayElu.idle;
    into.wall += ms;
    return { load, before, after, ms };
  };
  for (let r = 0; r < rounds; r++) {
    baseline.push((await measured(cpu.baseline, () => chatLoad(roundMs))).load);
    // Recording reaches its steady state (a few flushes) before the chat round starts, and the
    // rate counts what was committed during the round, so neither ramp-up nor the final drain
    // lands in or out of the window unfairly.
    await ask({ record: RATE, tenantId, projectId });
    await new Promise((r) => setTimeout(r, warmUpMs));
    const round = await measured(cpu.recording, () => chatLoad(roundMs));
    recording.push(round.load);
    recordMs += round.ms;
    recorded += round.after.stats!.recorded - round.before.stats!.recorded;
    accepted += inPipeline(round.after.stats!) - inPipeline(round.before.stats!);
    maxBacklog = Math.max(maxBacklog, round.after.stats!.writing + round.after.stats!.queued);
    const { stats: final } = await ask<{ stats: RecorderStats }>({ record: 0 });
    dropped += final.dropped;
  }
  const serverCpu = (c: typeof cpu.baseline) => ({ cpuMsPerSecond: Math.round((c.ms / c.wall) * 1000), gatewayUtilisation: +(c.busy / (c.busy + c.idle)).toFixed(3) });
  const chatBase: LoadResult = mergeLoads(baseline);
  const chatRec: LoadResult = mergeLoads(recording);
  const eventsPerSecond = Math.round(accepted / (recordMs / 1000));
  const committedPerSecond = Math.round(recorded / (recordMs / 1000));
  const keptPace = dropped === 0 && maxBacklog <= 1.5 * RATE;
  const p95Increase = +(chatRec.p95 / chatBase.p95 - 1).toFixed(3);

  const m = stats(metrics.samples);
  const p = stats(page.samples);
  const f = stats(filteredPage.samples);
  const result = {
    date: new Date().toISOString(), quick, cores: availableParallelism(), node: process.version, events: EVENTS, targets: TARGETS,
    bulkLoadPerSecond,
    metricsByAgentAndHour: { ...m, buckets: metrics.body.data.buckets.length, pass: m.p95 < TARGETS.metricsMs },
    eventsPage: { ...p, pass: p.p95 < TARGETS.eventsPageMs },
    filteredEventsPage: f,
    recording: { writer: process.env['PARLEY_BENCH_WRITER'] === 'discard' ? 'discard (diagnostic: producer side only)' : 'threaded', offeredRate: RATE, eventsPerSecond, committedPerSecond, dropped, maxBacklog, pass: RATE >= TARGETS.eventsPerSecond && eventsPerSecond >= 0.99 * RATE && keptPace },
    chat: { clients: CHAT_CLIENTS, baseline: chatBase, withRecording: chatRec, p95Increase, pass: p95Increase <= TARGETS.chatP95Increase },
    serverCpu: { baseline: serverCpu(cpu.baseline), withRecording: serverCpu(cpu.recording) },
  };
  const pad = (s: string | number, n: number): string => String(s).padStart(n);
  const rows = [
    `${'measure'.padEnd(44)}${pad('p50', 10)}${pad('p95', 10)}${pad('max', 10)}${pad('target', 12)}${pad('ok', 5)}`,
    `${`metrics agent_name,hour 24h (${EVENTS} ev) ms`.padEnd(44)}${pad(m.p50, 10)}${pad(m.p95, 10)}${pad(m.max, 10)}${pad(`< ${TARGETS.metricsMs}`, 12)}${pad(result.metricsByAgentAndHour.pass ? 'yes' : 'NO', 5)}`,
    `${'events page (default, 100) ms'.padEnd(44)}${pad(p.p50, 10)}${pad(p.p95, 10)}${pad(p.max, 10)}${pad(`< ${TARGETS.eventsPageMs}`, 12)}${pad(result.eventsPage.pass ? 'yes' : 'NO', 5)}`,
    `${'events page (2 filters, offset 200) ms'.padEnd(44)}${pad(f.p50, 10)}${pad(f.p95, 10)}${pad(f.max, 10)}${pad('-', 12)}${pad('', 5)}`,
    `${'chat p95 ms: baseline / with recording'.padEnd(44)}${pad(chatBase.p95, 10)}${pad(chatRec.p95, 10)}${pad(`${(p95Increase * 100).toFixed(1)}%`, 10)}${pad('<= +10%', 12)}${pad(result.chat.pass ? 'yes' : 'NO', 5)}`,
    `${'chat req/s: baseline / with recording'.padEnd(44)}${pad(chatBase.rps, 10)}${pad(chatRec.rps, 10)}`,
    `${'server CPU ms/s: baseline / with recording'.padEnd(44)}${pad(result.serverCpu.baseline.cpuMsPerSecond, 10)}${pad(result.serverCpu.withRecording.cpuMsPerSecond, 10)}`,
    `${'gateway thread busy: baseline / recording'.padEnd(44)}${pad(result.serverCpu.baseline.gatewayUtilisation, 10)}${pad(result.serverCpu.withRecording.gatewayUtilisation, 10)}`,
    `${'recording events/s (dropped, max backlog)'.padEnd(44)}${pad(eventsPerSecond, 10)}${pad(dropped, 10)}${pad(maxBacklog, 10)}${pad(`>= ${TARGETS.eventsPerSecond}`, 12)}${pad(result.recording.pass ? 'yes' : 'NO', 5)}`,
    `${'  of which committed within the rounds /s'.padEnd(44)}${pad(committedPerSecond, 10)}`,
    `${'bulk load events/s (bench process)'.padEnd(44)}${pad(bulkLoadPerSecond, 10)}`,
  ];
  if (process.env['PARLEY_BENCH_WRITER'] === 'discard') console.log('writer: discard (diagnostic: events are packed, never written)');
  console.log(rows.join('\n'));
  mkdirSync(new URL('../../../bench/results/', import.meta.url), { recursive: true });
  const out = new URL('../../../bench/results/analytics.json', import.meta.url);
  writeFileSync(out, JSON.stringify(result, null, 2));
  console.log(`\nwritten: ${out.pathname}`);
  if (chatBase.errors > 0 || chatRec.errors > 0) {
    console.error('chat answered errors during the bench');
    process.exitCode = 1;
  }
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
