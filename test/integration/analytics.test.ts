import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, call, createTenant, startTestServer, type TestServer, type TestTenant } from './harness.js';

const H = 3_600_000;
const CATS = [['llm', 'llm_call'], ['tool', 'tool_call'], ['message', 'turn'], ['llm', 'llm_call']] as const;

interface Ev {
  category: string;
  event_type: string;
  agent_name: string;
  session_id: string;
  channel: string;
  timestamp: string;
  duration_ms: number;
  error: string | null;
  metadata: Record<string, unknown>;
}

/** 40 events over 4 hours from `base`, every field varied on a known pattern. */
function dataSet(base: number): Ev[] {
  return Array.from({ length: 40 }, (_, i) => {
    const [category, event_type] = CATS[i % 4]!;
    const openai = i % 8 < 4;
    return {
      category, event_type, agent_name: i % 2 ? 'support' : 'sales', session_id: `sess-${i % 4}`, channel: i % 3 === 0 ? 'web' : 'api',
      timestamp: new Date(base + i * 6 * 60_000).toISOString(), duration_ms: 100 + i * 10, error: i % 5 === 0 ? 'timeout' : null,
      metadata: category === 'llm' ? { provider: openai ? 'openai' : 'anthropic', model: openai ? 'gpt-4o' : 'claude-3-5-haiku', tokens_in: 100 + i, tokens_out: 50, cost: 0.01 * (1 + (i % 3)) } : {},
    };
  });
}

function groupKey(e: Ev, d: string): string {
  const ts = Date.parse(e.timestamp);
  if (d === 'hour') return new Date(ts - (ts % H)).toISOString();
  if (d === 'day') return new Date(ts - (ts % (24 * H))).toISOString();
  return String((e as unknown as Record<string, unknown>)[d]);
}

function expected(events: Ev[], groupBy: string[]): Map<string, { count: number; errors: number; durs: number[]; tokens: number; cost: number }> {
  const out = new Map<string, { count: number; errors: number; durs: number[]; tokens: number; cost: number }>();
  for (const e of events) {
    const k = groupBy.map((d) => groupKey(e, d)).join('|');
    let g = out.get(k);
    if (!g) out.set(k, (g = { count: 0, errors: 0, durs: [], tokens: 0, cost: 0 }));
    g.count++;
    if (e.error) g.errors++;
    g.durs.push(e.duration_ms);
    g.tokens += ((e.metadata['tokens_in'] as number) ?? 0) + ((e.metadata['tokens_out'] as number) ?? 0);
    g.cost += (e.metadata['cost'] as number) ?? 0;
  }
  return out;
}

const qs = (o: Record<string, string | number>): string => new URLSearchParams(Object.entries(o).map(([k, v]): [string, string] => [k, String(v)])).toString();

describe('analytics API', () => {
  let server: TestServer;
  let other: TestTenant;
  let viewerKey: string;
  let chatKey: string;
  let base: number;
  let data: Ev[];
  let from: string;
  let to: string;
  let path: string;

  before(async () => {
    server = await startTestServer();
    path = `/api/projects/${server.projectId}/analytics`;
    base = Math.floor(Date.now() / H) * H - 6 * H;
    data = dataSet(base);
    from = new Date(base).toISOString();
    to = new Date(base + 4 * H).toISOString();
    const res = await call(server.base, 'POST', `${path}/events`, { body: { events: data } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.data.recorded, 40);
    // One event 25 hours ago, outside the default window of 24 hours, and one 23 hours ago, inside.
    const old = await call(server.base, 'POST', `${path}/events`, { body: { events: [
      { category: 'system', event_type: 'old', timestamp: new Date(Date.now() - 25 * H).toISOString() },
      { category: 'system', event_type: 'recent', timestamp: new Date(Date.now() - 23 * H).toISOString() },
    ] } });
    assert.equal(old.status, 201);
    other = await createTenant(server, 'Other tenant');
    viewerKey = (await call(server.base, 'POST', '/api/api-keys', { body: { name: 'viewer', role: 'viewer' } })).body.key;
    chatKey = (await call(server.base, 'POST', '/api/api-keys', { body: { name: 'chat', role: 'chat' } })).body.key;
  });
  after(() => server.close());

  for (const groupBy of ['category', 'event_type', 'agent_name', 'channel', 'hour', 'day', 'agent_name,hour']) {
    test(`metrics grouped by ${groupBy} carry every metric exactly (p95 within 1%)`, async () => {
      const res = await call(server.base, 'GET', `${path}/metrics?${qs({ from, to, groupBy, metrics: 'count,avg_duration,error_rate,p95_duration,sum_tokens,sum_cost' })}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const dims = groupBy.split(',');
      const exp = expected(data, dims);
      const buckets = res.body.data.buckets as Record<string, number | string | null>[];
      assert.equal(buckets.length, exp.size);
      for (const b of buckets) {
        const g = exp.get(dims.map((d) => String(b[d])).join('|'));
        assert.ok(g, JSON.stringify(b));
        assert.deepEqual(Object.keys(b).sort(), [...dims, 'count', 'avg_duration', 'error_rate', 'p95_duration', 'sum_tokens', 'sum_cost'].sort());
        assert.equal(b['count'], g.count);
        assert.equal(b['error_rate'], Math.round((g.errors / g.count) * 1e6) / 1e6);
        assert.ok((b['error_rate'] as number) >= 0 && (b['error_rate'] as number) <= 1);
        assert.equal(b['avg_duration'], Math.round((g.durs.reduce((s, x) => s + x, 0) / g.durs.length) * 100) / 100);
        const sorted = [...g.durs].sort((x, y) => x - y);
        const p95 = sorted[Math.ceil(0.95 * sorted.length) - 1]!;
        assert.ok(Math.abs((b['p95_duration'] as number) - p95) <= p95 * 0.01, `p95 ${b['p95_duration']} vs ${p95}`);
        assert.equal(b['sum_tokens'], g.tokens);
        assert.ok(Math.abs((b['sum_cost'] as number) - g.cost) < 1e-6);
      }
    });
  }

  test('metrics defaults: last 24 hours, grouped by category, count and error_rate', async () => {
    const res = await call(server.base, 'GET', `${path}/metrics`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data.groupBy, ['category']);
    assert.deepEqual(res.body.data.metrics, ['count', 'error_rate']);
    // The 25-hour-old system event is outside the window, the 23-hour-old one inside.
    assert.deepEqual(res.body.data.buckets, [
      { category: 'llm', count: 20, error_rate: 0.2 },
      { category: 'message', count: 10, error_rate: 0.2 },
      { category: 'system', count: 1, error_rate: 0 },
      { category: 'tool', count: 10, error_rate: 0.2 },
    ]);
    const llm = await call(server.base, 'GET', `${path}/metrics?${qs({ category: 'llm', groupBy: 'agent_name', metrics: 'count' })}`);
    assert.deepEqual(llm.body.data.buckets, [{ agent_name: 'sales', count: 10 }, { agent_name: 'support', count: 10 }]);
  });

  test('metrics refuse unknown dimensions, metrics, categories and bad time ranges', async () => {
    assertError(await call(server.base, 'GET', `${path}/metrics?groupBy=colour`), 400, 'VALIDATION_ERROR', /groupBy/);
    assertError(await call(server.base, 'GET', `${path}/metrics?metrics=count,median`), 400, 'VALIDATION_ERROR', /metrics/);
    assertError(await call(server.base, 'GET', `${path}/metrics?category=nope`), 400, 'VALIDATION_ERROR', /category/);
    assertError(await call(server.base, 'GET', `${path}/metrics?from=yesterday`), 400, 'VALIDATION_ERROR', /from/);
    assertError(await call(server.base, 'GET', `${path}/metrics?${qs({ from: to, to: from })}`), 400, 'VALIDATION_ERROR', /before/);
  });

  test('events: default page, newest first, no tenant fields, 24-hour default window', async () => {
    const res = await call(server.base, 'GET', `${path}/events`);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.total, 41);
    assert.equal(res.body.data.hasMore, false);
    assert.equal(res.body.data.events.length, 41);
    assert.equal(res.body.data.events[40].event_type, 'recent');
    const first = res.body.data.events[0];
    assert.equal(first.timestamp, data[39]!.timestamp);
    assert.equal(first.event_type, data[39]!.event_type);
    assert.equal(first.tenantId, undefined);
    assert.equal(first.projectId, undefined);
    assert.equal(typeof first.id, 'string');
  });

  test('events: every filter, limit/offset and hasMore', async () => {
    const cases: [Record<string, string>, (e: Ev) => boolean][] = [
      [{ category: 'llm' }, (e) => e.category === 'llm'],
      [{ eventTypes: 'tool_call,turn' }, (e) => e.event_type === 'tool_call' || e.event_type === 'turn'],
      [{ sessionId: 'sess-1' }, (e) => e.session_id === 'sess-1'],
      [{ agentName: 'support' }, (e) => e.agent_name === 'support'],
      [{ hasError: 'true' }, (e) => e.error !== null],
      [{ category: 'llm', agentName: 'sales', hasError: 'true' }, (e) => e.category === 'llm' && e.agent_name === 'sales' && e.error !== null],
    ];
    for (const [filter, keep] of cases) {
      const exp = data.filter(keep).reverse();
      const res = await call(server.base, 'GET', `${path}/events?${qs({ from, to, ...filter, limit: 3, offset: 1 })}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.total, exp.length, JSON.stringify(filter));
      assert.deepEqual(res.body.data.events.map((e: Ev) => e.timestamp), exp.slice(1, 4).map((e) => e.timestamp), JSON.stringify(filter));
      assert.equal(res.body.data.hasMore, exp.length > 4);
    }
    const tail = await call(server.base, 'GET', `${path}/events?${qs({ from, to, limit: 10, offset: 35 })}`);
    assert.equal(tail.body.data.events.length, 5);
    assert.equal(tail.body.data.hasMore, false);
    const max = await call(server.base, 'GET', `${path}/events?${qs({ from, to, limit: 10000 })}`);
    assert.equal(max.status, 200);
    assertError(await call(server.base, 'GET', `${path}/events?limit=10001`), 400, 'VALIDATION_ERROR', /limit/);
    assertError(await call(server.base, 'GET', `${path}/events?limit=0`), 400, 'VALIDATION_ERROR', /limit/);
    assertError(await call(server.base, 'GET', `${path}/events?offset=-1`), 400, 'VALIDATION_ERROR', /offset/);
    assertError(await call(server.base, 'GET', `${path}/events?hasError=yes`), 400, 'VALIDATION_ERROR', /hasError/);
    assertError(await call(server.base, 'GET', `${path}/events?to=2020-13-45T00:00:00Z`), 400, 'VALIDATION_ERROR', /to/);
  });

  test('POST query takes the same filters in a body', async () => {
    const res = await call(server.base, 'POST', `${path}/query`, { body: { timeRange: { from, to }, category: 'llm', eventTypes: ['llm_call'], agentName: 'sales', hasError: false, limit: 2, offset: 0 } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const exp = data.filter((e) => e.category === 'llm' && e.agent_name === 'sales' && !e.error).reverse();
    assert.equal(res.body.data.total, exp.length);
    assert.deepEqual(res.body.data.events.map((e: Ev) => e.timestamp), exp.slice(0, 2).map((e) => e.timestamp));
    assert.equal(res.body.data.hasMore, true);
    const bySession = await call(server.base, 'POST', `${path}/query`, { body: { timeRange: { from, to }, sessionId: 'sess-2' } });
    assert.equal(bySession.body.data.total, 10);
    assertError(await call(server.base, 'POST', `${path}/query`, { body: { category: 'llm' } }), 400, 'VALIDATION_ERROR', /timeRange/);
    assertError(await call(server.base, 'POST', `${path}/query`, { body: { timeRange: { from, to }, limit: 10_001 } }), 400, 'VALIDATION_ERROR', /limit/);
    assertError(await call(server.base, 'POST', `${path}/query`, { body: { timeRange: { from, to }, colour: 'red' } }), 400, 'VALIDATION_ERROR', /colour/);
  });

  test('POST aggregate groups and filters like the metrics endpoint', async () => {
    const res = await call(server.base, 'POST', `${path}/aggregate`, { body: { timeRange: { from, to }, groupBy: ['agent_name', 'channel'], metrics: ['count', 'sum_tokens'], filters: { category: 'llm', eventTypes: ['llm_call'] } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const exp = expected(data.filter((e) => e.category === 'llm'), ['agent_name', 'channel']);
    assert.deepEqual(res.body.data.buckets, [...exp.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, g]) => {
      const [agent_name, channel] = k.split('|');
      return { agent_name, channel, count: g.count, sum_tokens: g.tokens };
    }));
    const total = await call(server.base, 'POST', `${path}/aggregate`, { body: { timeRange: { from, to }, groupBy: [], metrics: ['count', 'error_rate'] } });
    assert.deepEqual(total.body.data.buckets, [{ count: 40, error_rate: 0.2 }]);
    assertError(await call(server.base, 'POST', `${path}/aggregate`, { body: { timeRange: { from, to }, groupBy: ['category'] } }), 400, 'VALIDATION_ERROR', /metrics/);
    assertError(await call(server.base, 'POST', `${path}/aggregate`, { body: { timeRange: { from, to }, groupBy: ['x'], metrics: ['count'] } }), 400, 'VALIDATION_ERROR', /groupBy/);
  });

  test('cost breakdown by model and by provider', async () => {
    const res = await call(server.base, 'GET', `${path}/cost-breakdown?${qs({ from, to })}`);
    assert.equal(res.status, 200);
    const llm = data.filter((e) => e.category === 'llm');
    const sum = (es: Ev[], f: (e: Ev) => number): number => es.reduce((s, e) => s + f(e), 0);
    const cost = (e: Ev): number => e.metadata['cost'] as number;
    assert.ok(Math.abs(res.body.data.totalCost - sum(llm, cost)) < 1e-6);
    assert.equal(res.body.data.calls, 20);
    assert.equal(res.body.data.currency, 'USD');
    for (const provider of ['openai', 'anthropic']) {
      const mine = llm.filter((e) => e.metadata['provider'] === provider);
      const p = res.body.data.byProvider.find((b: { provider: string }) => b.provider === provider);
      assert.equal(p.calls, mine.length);
      assert.ok(Math.abs(p.sum_cost - sum(mine, cost)) < 1e-6);
      assert.equal(p.sum_tokens, sum(mine, (e) => (e.metadata['tokens_in'] as number) + 50));
      const m = res.body.data.byModel.find((b: { provider: string }) => b.provider === provider);
      assert.equal(m.model, provider === 'openai' ? 'gpt-4o' : 'claude-3-5-haiku');
      assert.equal(m.calls, mine.length);
    }
  });

  test('agent endpoint: summary, by event type and by hour for one agent', async () => {
    const created = await call(server.base, 'POST', `/api/projects/${server.projectId}/agents`, { body: { name: 'support', dslContent: 'AGENT: support\nFALLBACK: "hi"' } });
    assert.equal(created.status, 201);
    await call(server.base, 'POST', `/api/projects/${server.projectId}/agents`, { body: { name: 'nobody', dslContent: 'AGENT: nobody\nFALLBACK: "hi"' } });
    const res = await call(server.base, 'GET', `${path}/agents/support?${qs({ from, to })}`);
    assert.equal(res.status, 200);
    const mine = data.filter((e) => e.agent_name === 'support');
    assert.equal(res.body.data.agentName, 'support');
    assert.equal(res.body.data.summary.count, mine.length);
    assert.equal(res.body.data.summary.error_rate, mine.filter((e) => e.error).length / mine.length);
    assert.deepEqual(res.body.data.byEventType.map((b: { event_type: string; count: number }) => [b.event_type, b.count]), [['llm_call', 10], ['tool_call', 10]]);
    assert.equal(res.body.data.byHour.reduce((s: number, b: { count: number }) => s + b.count, 0), mine.length);
    // An agent of the project without events has zeros; an agent the project does not have is 404.
    const none = await call(server.base, 'GET', `${path}/agents/nobody?${qs({ from, to })}`);
    assert.equal(none.status, 200);
    assert.equal(none.body.data.summary.count, 0);
    assertError(await call(server.base, 'GET', `${path}/agents/ghost?${qs({ from, to })}`), 404, 'NOT_FOUND');
  });

  test('session metrics aggregate per session', async () => {
    const res = await call(server.base, 'GET', `${path}/session-metrics?${qs({ from, to })}`);
    assert.equal(res.status, 200);
    const d = res.body.data;
    assert.equal(d.sessions, 4);
    assert.equal(d.events, 40);
    assert.equal(d.turns, 10);
    assert.equal(d.avgEventsPerSession, 10);
    // Session k holds events k, k+4, …, k+36: 36 × 6 minutes from first to last.
    assert.equal(d.avgSessionDurationMs, 36 * 6 * 60_000);
    assert.equal(d.sessionsWithErrors, 4);
    assert.equal(d.byChannel.web + d.byChannel.api, 4);
  });

  test('recording validates category, batch size and timestamps', async () => {
    assertError(await call(server.base, 'POST', `${path}/events`, { body: { events: [{ category: 'weather', event_type: 'x' }] } }), 400, 'VALIDATION_ERROR', /category/);
    assertError(await call(server.base, 'POST', `${path}/events`, { body: { events: [] } }), 400, 'VALIDATION_ERROR');
    const tooMany = Array.from({ length: 1001 }, () => ({ category: 'system', event_type: 'x' }));
    assertError(await call(server.base, 'POST', `${path}/events`, { body: { events: tooMany } }), 400, 'VALIDATION_ERROR', /events/);
    const ancient = new Date(Date.now() - 31 * 24 * H).toISOString();
    assertError(await call(server.base, 'POST', `${path}/events`, { body: { events: [{ category: 'system', event_type: 'x', timestamp: ancient }] } }), 400, 'VALIDATION_ERROR', /retention/);
    assertError(await call(server.base, 'POST', `${path}/events`, { body: { events: [{ category: 'system', event_type: 'x', tenantId: 'other' }] } }), 400, 'VALIDATION_ERROR', /tenantId/);
  });

  test("another tenant's project is 404 and its own analytics hold none of ours", async () => {
    for (const [method, sub] of [['GET', 'metrics'], ['GET', 'events'], ['GET', 'agents/sales'], ['GET', 'cost-breakdown'], ['GET', 'session-metrics']] as const) {
      assertError(await call(server.base, method, `${path}/${sub}`, { key: other.key }), 404, 'NOT_FOUND');
    }
    assertError(await call(server.base, 'POST', `${path}/query`, { key: other.key, body: { timeRange: { from, to } } }), 404, 'NOT_FOUND');
    assertError(await call(server.base, 'POST', `${path}/events`, { key: other.key, body: { events: [{ category: 'system', event_type: 'x' }] } }), 404, 'NOT_FOUND');
    const own = await call(server.base, 'GET', `/api/projects/${other.projectId}/analytics/events?${qs({ from, to })}`, { key: other.key });
    assert.equal(own.status, 200);
    assert.equal(own.body.data.total, 0);
  });

  test('a viewer reads analytics but cannot record; a chat key cannot read', async () => {
    const read = await call(server.base, 'GET', `${path}/metrics?${qs({ from, to })}`, { key: viewerKey });
    assert.equal(read.status, 200);
    assert.equal(read.body.data.buckets.length, 3);
    assertError(await call(server.base, 'POST', `${path}/events`, { key: viewerKey, body: { events: [{ category: 'system', event_type: 'x' }] } }), 403, 'FORBIDDEN', /analytics:write/);
    assertError(await call(server.base, 'GET', `${path}/events`, { key: chatKey }), 403, 'FORBIDDEN', /session:read/);
    assertError(await call(server.base, 'POST', `${path}/aggregate`, { key: chatKey, body: { timeRange: { from, to }, groupBy: [], metrics: ['count'] } }), 403, 'FORBIDDEN');
  });
});
