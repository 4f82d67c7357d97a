import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventIdGenerator, EventStore, type AnalyticsEvent } from '../../actors/index.js';
import { assertError, call, createTenant, startTestServer, type TestServer, type TestTenant } from './harness.js';
import { parseCsv } from '../fixtures/csv.js';

const ids = new EventIdGenerator();
const BASE = Math.floor((Date.now() - 3_600_000) / 1000) * 1000;
const at = (offsetMs: number): string => new Date(BASE + offsetMs).toISOString();

/** A stored event with defaults for everything the test does not care about. */
function ev(t: TestTenant, fields: Partial<AnalyticsEvent> & Pick<AnalyticsEvent, 'category' | 'event_type' | 'timestamp'>): AnalyticsEvent {
  return {
    id: ids.next(Date.parse(fields.timestamp)), tenantId: t.tenantId, projectId: t.projectId, agent_name: 'billing', session_id: null, channel: 'api',
    duration_ms: null, error: null, span_id: null, parent_span_id: null, metadata: {}, ...fields,
  };
}

const llm = (model: string, provider: string, tokensIn: number, tokensOut: number, cost: number) => ({ provider, model, tokens_in: tokensIn, tokens_out: tokensOut, cost });


describe('session traces', () => {
  let server: TestServer;
  let a: TestTenant;
  let b: TestTenant;
  let big: TestTenant;
  let chatKey: string;
  let viewerKey: string;
  const S1 = 'sess-one';
  const S2 = 'sess-two';
  const BIG_ROWS = 3000;

  before(async () => {
    server = await startTestServer();
    a = await createTenant(server, 'Trace A');
    b = await createTenant(server, 'Trace B');
    big = await createTenant(server, 'Trace Big');
    const store = new EventStore(server.parley.deps.analytics, { retentionDays: 30 });
    const s1 = { session_id: S1 };
    await store.write([
      ev(a, { ...s1, category: 'session', event_type: 'session_start', timestamp: at(-1) }),
      ev(a, { ...s1, category: 'message', event_type: 'turn', span_id: 't1', duration_ms: 900, timestamp: at(0) }),
      ev(a, { ...s1, category: 'llm', event_type: 'llm_call', span_id: 'l1', parent_span_id: 't1', duration_ms: 400, timestamp: at(10), metadata: llm('gpt-4o-mini', 'openai', 100, 20, 0.001) }),
      ev(a, { ...s1, category: 'tool', event_type: 'tool_call', span_id: 'c1', parent_span_id: 't1', duration_ms: 300, error: 'timeout', timestamp: at(420), metadata: { tool_name: 'lookup' } }),
      ev(a, { ...s1, category: 'tool', event_type: 'tool_call', span_id: 'c2', parent_span_id: 't1', duration_ms: 150, timestamp: at(730), metadata: { tool_name: 'lookup' } }),
      ev(a, { ...s1, category: 'llm', event_type: 'llm_call', span_id: 'l2', parent_span_id: 't1', duration_ms: 100, timestamp: at(890), metadata: llm('gpt-4o-mini', 'openai', 50, 30, 0.0005) }),
      ev(a, { ...s1, category: 'message', event_type: 'turn', span_id: 't2', duration_ms: 2500, timestamp: at(5000) }),
      ev(a, { ...s1, category: 'agent', event_type: 'delegate', span_id: 'd1', parent_span_id: 't2', duration_ms: 2000, timestamp: at(5010), metadata: { toAgent: 'fraud_check' } }),
      ev(a, { ...s1, category: 'llm', event_type: 'llm_call', agent_name: 'fraud_check', span_id: 'l3', parent_span_id: 'd1', duration_ms: 1800, timestamp: at(5020), metadata: llm('claude-3-haiku', 'anthropic', 10, 10, 0.002) }),
      ev(a, { ...s1, category: 'llm', event_type: 'llm_call', span_id: 'l4', parent_span_id: 't2', duration_ms: 50, error: 'rate limited', timestamp: at(7100), metadata: llm('gpt-4o-mini', 'openai', 0, 0, 0) }),
      ev(a, { ...s1, category: 'tool', event_type: 'tool_call', span_id: 'c9', parent_span_id: 'ghost', duration_ms: 5, timestamp: at(7200), metadata: { tool_name: 'stray' } }),
      ev(a, { session_id: S2, category: 'llm', event_type: 'llm_call', span_id: 'x1', agent_name: '=HYPERLINK("http://evil")', duration_ms: 70, timestamp: at(60_000), metadata: llm('gpt-4o', 'openai', 7, 8, 0.01) }),
      ev(a, { session_id: S2, category: 'llm', event_type: 'llm_call', span_id: 'x2', duration_ms: 80, error: 'bad, "quoted"\nsecond line', timestamp: at(61_000), metadata: llm('gpt-4o', 'openai', 1, 2, 0.02) }),
      ev(a, { session_id: S2, category: 'tool', event_type: 'tool_call', span_id: 'x3', duration_ms: 9, timestamp: at(62_000), metadata: { tool_name: '+1,2' } }),
      // Not part of any session: neither a trace nor an export row.
      ev(a, { category: 'deployment', event_type: 'deployment_created', timestamp: at(63_000) }),
      ev(b, { session_id: 'sess-b', category: 'llm', event_type: 'llm_call', span_id: 'b1', timestamp: at(100), metadata: llm('gpt-4o', 'openai', 1, 1, 0) }),
    ]);
    const many: AnalyticsEvent[] = [];
    for (let i = 0; i < BIG_ROWS; i++) many.push(ev(big, { session_id: `bulk-${i % 7}`, category: 'tool', event_type: 'tool_call', span_id: `s${i}`, timestamp: at(i * 7), metadata: { n: i, note: 'comma, "quote"' } }));
    await store.write(many);
    const chat = await call(server.base, 'POST', '/api/api-keys', { key: a.key, body: { name: 'chat only', role: 'chat' } });
    chatKey = chat.body.key;
    const viewer = await call(server.base, 'POST', '/api/api-keys', { key: a.key, body: { name: 'viewer', role: 'viewer' } });
    viewerKey = viewer.body.key;
  });

  after(async () => {
    await server?.close();
  });

  const path = (t: TestTenant, rest: string): string => `/api/projects/${t.projectId}/sessions/${rest}`;

  test('traces: turns are roots with model calls, tool calls and delegations as children; orphans stay at the top', async () => {
    const res = await call(server.base, 'GET', path(a, `${S1}/traces`), { key: a.key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const trace = res.body.data;
    assert.equal(trace.sessionId, S1);
    assert.equal(trace.eventCount, 11);
    assert.equal(trace.spanCount, 10);
    assert.deepEqual(trace.roots.map((n: any) => n.span_id ?? n.event_type), ['session_start', 't1', 't2', 'c9']);
    assert.deepEqual(trace.orphanParents, ['ghost']);
    const [, t1, t2] = trace.roots;
    assert.deepEqual(t1.children.map((n: any) => n.span_id), ['l1', 'c1', 'c2', 'l2']);
    assert.ok(t1.children.every((n: any) => n.parent_span_id === 't1' && n.children.length === 0));
    assert.deepEqual(t2.children.map((n: any) => n.span_id), ['d1', 'l4']);
    assert.deepEqual(t2.children[0].children.map((n: any) => [n.span_id, n.agent_name]), [['l3', 'fraud_check']]);
    assert.equal(t1.children[0].metadata.model, 'gpt-4o-mini');
    assert.equal(t1.tenantId, undefined, 'tenant ids are never returned');
    assert.equal(t1.projectId, undefined);
  });

  test('children: the direct children of a span in time order; a leaf has none; an unknown span is 404', async () => {
    const t1 = await call(server.base, 'GET', path(a, `${S1}/traces/t1/children`), { key: a.key });
    assert.equal(t1.status, 200);
    assert.equal(t1.body.data.span.span_id, 't1');
    assert.equal(t1.body.data.span.event_type, 'turn');
    assert.deepEqual(t1.body.data.children.map((e: any) => e.span_id), ['l1', 'c1', 'c2', 'l2']);
    const d1 = await call(server.base, 'GET', path(a, `${S1}/traces/d1/children`), { key: a.key });
    assert.deepEqual(d1.body.data.children.map((e: any) => e.span_id), ['l3']);
    const leaf = await call(server.base, 'GET', path(a, `${S1}/traces/l1/children`), { key: a.key });
    assert.equal(leaf.status, 200);
    assert.deepEqual(leaf.body.data.children, []);
    assertError(await call(server.base, 'GET', path(a, `${S1}/traces/nope/children`), { key: a.key }), 404, 'NOT_FOUND', /Span not found/);
    assertError(await call(server.base, 'GET', path(a, `${S1}/traces/x1/children`), { key: a.key }), 404, 'NOT_FOUND', /Span not found/);
  });

  test('analysis: slowest span, errors, retries and token totals', async () => {
    const res = await call(server.base, 'GET', path(a, `${S1}/analysis`), { key: a.key });
    assert.equal(res.status, 200);
    const d = res.body.data;
    assert.equal(d.sessionId, S1);
    assert.equal(d.turnCount, 2);
    assert.equal(d.totalTurnDurationMs, 3400);
    assert.equal(d.modelCallCount, 4);
    assert.equal(d.toolCallCount, 3);
    assert.equal(d.delegationCount, 1);
    assert.equal(d.slowestSpan.span_id, 't2');
    assert.equal(d.slowestSpan.duration_ms, 2500);
    assert.equal(d.slowestByCategory.llm.span_id, 'l3');
    assert.equal(d.slowestByCategory.tool.span_id, 'c1');
    assert.equal(d.errorCount, 2);
    assert.deepEqual(d.errors.map((e: any) => [e.span_id, e.error]), [['c1', 'timeout'], ['l4', 'rate limited']]);
    // lookup failed then ran again in the same turn: one retry. The two successful gpt-4o-mini calls are not retries.
    assert.equal(d.retryCount, 1);
    assert.equal(d.retries.length, 1);
    assert.deepEqual({ ...d.retries[0], event_ids: d.retries[0].event_ids.length }, { parent_span_id: 't1', category: 'tool', target: 'lookup', attempts: 2, failures: 1, retries: 1, event_ids: 2 });
    assert.deepEqual({ input: d.tokens.input, output: d.tokens.output, total: d.tokens.total, cost: d.tokens.cost }, { input: 160, output: 60, total: 220, cost: 0.0035 });
    const byModel = Object.fromEntries(d.tokens.byModel.map((m: any) => [`${m.provider}/${m.model}`, [m.calls, m.tokens_in, m.tokens_out, m.cost]]));
    assert.deepEqual(byModel, { 'openai/gpt-4o-mini': [3, 150, 50, 0.0015], 'anthropic/claude-3-haiku': [1, 10, 10, 0.002] });
    assert.equal(d.wallClockMs, 7501, 'first event (-1 ms) to the latest end (turn t2: 5000 + 2500 ms)');
  });

  test('generations: only llm events, across sessions, newest first, paginated', async () => {
    const first = await call(server.base, 'GET', `/api/projects/${a.projectId}/sessions/generations?limit=4`, { key: a.key });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.data.total, 6);
    assert.equal(first.body.data.hasMore, true);
    assert.deepEqual(first.body.data.generations.map((e: any) => e.span_id), ['x2', 'x1', 'l4', 'l3']);
    const second = await call(server.base, 'GET', `/api/projects/${a.projectId}/sessions/generations?limit=4&offset=4`, { key: a.key });
    assert.deepEqual(second.body.data.generations.map((e: any) => e.span_id), ['l2', 'l1']);
    assert.equal(second.body.data.hasMore, false);
    assert.ok(second.body.data.generations.every((e: any) => e.category === 'llm' && e.tenantId === undefined));
    const one = await call(server.base, 'GET', `/api/projects/${a.projectId}/sessions/generations?sessionId=${S2}`, { key: a.key });
    assert.deepEqual(one.body.data.generations.map((e: any) => e.span_id), ['x2', 'x1']);
    const windowed = await call(server.base, 'GET', `/api/projects/${a.projectId}/sessions/generations?from=${encodeURIComponent(at(5000))}&to=${encodeURIComponent(at(60_000))}`, { key: a.key });
    assert.deepEqual(windowed.body.data.generations.map((e: any) => e.span_id), ['l4', 'l3'], 'from inclusive, to exclusive');
    assertError(await call(server.base, 'GET', `/api/projects/${a.projectId}/sessions/generations?from=yesterday`, { key: a.key }), 400, 'VALIDATION_ERROR', /from/);
    const other = await call(server.base, 'GET', `/api/projects/${b.projectId}/sessions/generations`, { key: b.key });
    assert.deepEqual(other.body.data.generations.map((e: any) => e.span_id), ['b1']);
  });

  test('export: CSV with a header, RFC 4180 quoting and defused formulas; only session events', async () => {
    const res = await fetch(`${server.base}${path(a, 'export')}`, { headers: { authorization: `Bearer ${a.key}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="session-traces-.+\.csv"$/);
    const rows = parseCsv(await res.text());
    const [header, ...data] = rows;
    assert.deepEqual(header!.slice(0, 8), ['id', 'timestamp', 'session_id', 'span_id', 'parent_span_id', 'category', 'event_type', 'agent_name']);
    assert.equal(data.length, 14, 'the 11 + 3 session events; the deployment event has no session');
    assert.ok(data.every((r) => r.length === header!.length));
    const col = (name: string): number => header!.indexOf(name);
    const x1 = data.find((r) => r[col('span_id')] === 'x1')!;
    assert.equal(x1[col('agent_name')], `'=HYPERLINK("http://evil")`);
    assert.equal(x1[col('tokens_in')], '7');
    const x2 = data.find((r) => r[col('span_id')] === 'x2')!;
    assert.equal(x2[col('error')], 'bad, "quoted"\nsecond line');
    const x3 = data.find((r) => r[col('span_id')] === 'x3')!;
    assert.deepEqual(JSON.parse(x3[col('metadata')]!), { tool_name: '+1,2' });
    assert.deepEqual(data.map((r) => r[col('timestamp')]), [...data.map((r) => r[col('timestamp')]!)].sort(), 'oldest first');
  });

  test('export: a large export arrives complete, in order; limit and sessionId narrow it', async () => {
    const res = await fetch(`${server.base}${path(big, 'export')}`, { headers: { authorization: `Bearer ${big.key}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    const [header, ...data] = parseCsv(await res.text());
    assert.equal(data.length, BIG_ROWS);
    const n = data.map((r) => JSON.parse(r[header!.indexOf('metadata')]!).n);
    assert.deepEqual(n, Array.from({ length: BIG_ROWS }, (_, i) => i));
    const limited = parseCsv(await (await fetch(`${server.base}${path(big, 'export')}?limit=1234`, { headers: { authorization: `Bearer ${big.key}` } })).text());
    assert.equal(limited.length, 1 + 1234);
    const one = parseCsv(await (await fetch(`${server.base}${path(big, 'export')}?sessionId=bulk-3`, { headers: { authorization: `Bearer ${big.key}` } })).text());
    assert.equal(one.length, 1 + Math.ceil((BIG_ROWS - 3) / 7));
    assert.ok(one.slice(1).every((r) => r[2] === 'bulk-3'));
    assertError(await call(server.base, 'GET', `${path(big, 'export')}?limit=0`, { key: big.key }), 400, 'VALIDATION_ERROR', /limit/);
  });

  test('events recorded through POST …/analytics/events form a trace', async () => {
    const t = await createTenant(server, 'Trace Recorded');
    const recorded = await call(server.base, 'POST', `/api/projects/${t.projectId}/analytics/events`, {
      key: t.key,
      body: { events: [
        { category: 'message', event_type: 'turn', session_id: 'rec-1', span_id: 'turn-1', duration_ms: 30, timestamp: at(0) },
        { category: 'llm', event_type: 'llm_call', session_id: 'rec-1', span_id: 'call-1', parent_span_id: 'turn-1', duration_ms: 20, timestamp: at(1), metadata: llm('m', 'p', 3, 4, 0.5) },
        { category: 'gather', event_type: 'gather_prompt', session_id: 'rec-1', parent_span_id: 'turn-1', timestamp: at(2), metadata: { flow: 'refund', slot: 'invoice_id' } },
      ] },
    });
    assert.equal(recorded.status, 201, JSON.stringify(recorded.body));
    const trace = await call(server.base, 'GET', path(t, 'rec-1/traces'), { key: t.key });
    assert.deepEqual(trace.body.data.roots.map((n: any) => [n.span_id, n.children.map((c: any) => c.event_type)]), [['turn-1', ['llm_call', 'gather_prompt']]]);
    const analysis = await call(server.base, 'GET', path(t, 'rec-1/analysis'), { key: t.key });
    assert.equal(analysis.body.data.tokens.total, 7);
    assert.equal(analysis.body.data.slowestSpan.span_id, 'turn-1');
  });

  test('unknown sessions and other tenants are 404', async () => {
    assertError(await call(server.base, 'GET', path(a, 'no-such-session/traces'), { key: a.key }), 404, 'NOT_FOUND', /Session not found/);
    assertError(await call(server.base, 'GET', path(a, 'no-such-session/analysis'), { key: a.key }), 404, 'NOT_FOUND');
    // B asks for A's session in B's own project, and for A's project.
    assertError(await call(server.base, 'GET', path(b, `${S1}/traces`), { key: b.key }), 404, 'NOT_FOUND', /Session not found/);
    for (const rest of [`${S1}/traces`, `${S1}/traces/t1/children`, `${S1}/analysis`, 'generations', 'export']) {
      assertError(await call(server.base, 'GET', path(a, rest), { key: b.key }), 404, 'NOT_FOUND');
    }
  });

  test('session:read is required: a chat key is refused, a viewer key is let in', async () => {
    for (const rest of [`${S1}/traces`, `${S1}/traces/t1/children`, `${S1}/analysis`, 'generations', 'export']) {
      assertError(await call(server.base, 'GET', path(a, rest), { key: chatKey }), 403, 'FORBIDDEN', /session:read/);
      const ok = await call(server.base, 'GET', path(a, rest), { key: viewerKey });
      assert.equal(ok.status, 200, rest);
    }
  });
});
