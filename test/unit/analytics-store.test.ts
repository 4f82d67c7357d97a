import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbStore } from '../../runtime/index.js';
import { EventIdGenerator, EventStore, bucketOf, bucketValue, type AnalyticsEvent, type AnyDimension, type EventCategory, type Metric } from '../../actors/index.js';

const T0 = Date.UTC(2030, 0, 1, 10, 0, 0);
const H = 3_600_000;
const AGENTS = ['alpha', 'beta', null];
const KINDS: [EventCategory, string][] = [['llm', 'llm_call'], ['tool', 'tool_call'], ['message', 'turn']];

/** A deterministic data set over 3 hours: 3,600 events, every 7th an error, every 11th without duration. */
function dataSet(tenantId: string, projectId: string): AnalyticsEvent[] {
  const ids = new EventIdGenerator();
  const out: AnalyticsEvent[] = [];
  for (let i = 0; i < 3600; i++) {
    const ts = T0 + i * 3000 + (i % 5);
    const [category, event_type] = KINDS[i % 3]!;
    const llm = category === 'llm';
    out.push({
      id: ids.next(ts), tenantId, projectId, category, event_type,
      agent_name: AGENTS[i % AGENTS.length === 0 ? 0 : (i >> 2) % 3]!,
      session_id: `s${i % 20}`, channel: i % 4 === 0 ? 'web' : 'api',
      timestamp: new Date(ts).toISOString(), duration_ms: i % 11 === 0 ? null : (i * 37) % 2000,
      error: i % 7 === 0 ? 'boom' : null, span_id: `sp${i}`, parent_span_id: null,
      metadata: llm ? { provider: i % 2 ? 'openai' : 'anthropic', model: i % 2 ? 'gpt-4o' : 'claude-3-5-haiku', tokens_in: i % 100, tokens_out: 10, cost: 0.001 * (i % 3) } : {},
    });
  }
  return out;
}

/** The answer computed the slow, obvious way. */
function naive(events: AnalyticsEvent[], from: number, to: number, groupBy: AnyDimension[]): Map<string, { count: number; errors: number; durs: number[]; tokens: number; cost: number }> {
  const groups = new Map<string, { count: number; errors: number; durs: number[]; tokens: number; cost: number }>();
  for (const e of events) {
    const ts = Date.parse(e.timestamp);
    if (ts < from || ts >= to) continue;
    const key = groupBy.map((d) => {
      if (d === 'hour') return new Date(ts - (ts % H)).toISOString();
      if (d === 'day') return new Date(ts - (ts % 86_400_000)).toISOString();
      if (d === 'provider' || d === 'model') return String(e.metadata[d] ?? null);
      return String(e[d]);
    }).join('|');
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { count: 0, errors: 0, durs: [], tokens: 0, cost: 0 }));
    g.count++;
    if (e.error) g.errors++;
    if (e.duration_ms !== null) g.durs.push(e.duration_ms);
    g.tokens += ((e.metadata['tokens_in'] as number) ?? 0) + ((e.metadata['tokens_out'] as number) ?? 0);
    g.cost += (e.metadata['cost'] as number) ?? 0;
  }
  return groups;
}

describe('analytics event store', () => {
  let dir: string;
  let store: LmdbStore;
  let events: EventStore;
  let data: AnalyticsEvent[];
  const ALL: Metric[] = ['count', 'avg_duration', 'error_rate', 'p95_duration', 'sum_tokens', 'sum_cost'];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-analytics-'));
    store = new LmdbStore({ path: dir, durability: 'commit' });
    events = new EventStore(store, { retentionDays: 30 });
    data = dataSet('t1', 'p1');
    for (let i = 0; i < data.length; i += 500) await events.write(data.slice(i, i + 500));
    await events.write(dataSet('t2', 'p1').slice(0, 100));
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('Collection.range and count honour start and end inside a prefix, both directions', async () => {
    const c = store.collection<number>('range-test');
    await store.transaction(() => {
      for (let i = 0; i < 10; i++) c.putSync(['a', i], i);
      c.putSync(['b', 0], 99);
    });
    assert.deepEqual(c.range({ prefix: ['a'], start: ['a', 3], end: ['a', 6] }).map((e) => e.value), [3, 4, 5]);
    assert.deepEqual(c.range({ prefix: ['a'], start: ['a', 3], end: ['a', 6], reverse: true }).map((e) => e.value), [5, 4, 3]);
    assert.deepEqual(c.range({ prefix: ['a'], start: ['a', 8] }).map((e) => e.value), [8, 9]);
    assert.deepEqual(c.range({ prefix: ['a'], end: ['a', 2], reverse: true }).map((e) => e.value), [1, 0]);
    assert.deepEqual(c.range({ prefix: ['a'], reverse: true, limit: 2 }).map((e) => e.value), [9, 8]);
    assert.equal(c.count(['a'], { start: ['a', 2], end: ['a', 7] }), 5);
    assert.equal(c.count(['a']), 10);
  });

  const ranges: [string, number, number][] = [
    ['whole hours', T0, T0 + 3 * H],
    ['unaligned edges', T0 + 90_017, T0 + 2 * H + 1_805_003],
    ['inside one minute', T0 + 60_500, T0 + 100_000],
    ['inside one hour', T0 + H + 61_000, T0 + H + 1_200_001],
  ];
  const groupings: AnyDimension[][] = [['category'], ['event_type'], ['agent_name'], ['channel'], ['hour'], ['day'], ['agent_name', 'hour'], ['provider', 'model'], []];

  for (const [label, from, to] of ranges) {
    for (const groupBy of groupings) {
      test(`aggregate by [${groupBy.join(',')}] over ${label} matches a naive computation`, () => {
        const buckets = events.aggregate({ tenantId: 't1', projectId: 'p1', from, to, groupBy, metrics: ALL });
        const expected = naive(data, from, to, groupBy);
        assert.equal(buckets.length, expected.size);
        for (const b of buckets) {
          const key = groupBy.map((d) => String(b[d])).join('|');
          const g = expected.get(key);
          assert.ok(g, `unexpected group ${key}`);
          assert.equal(b['count'], g.count);
          assert.equal(b['error_rate'], Math.round((g.errors / g.count) * 1e6) / 1e6);
          assert.equal(b['sum_tokens'], g.tokens);
          assert.ok(Math.abs((b['sum_cost'] as number) - g.cost) < 1e-7);
          if (g.durs.length === 0) {
            assert.equal(b['avg_duration'], null);
            assert.equal(b['p95_duration'], null);
          } else {
            const avg = g.durs.reduce((s, x) => s + x, 0) / g.durs.length;
            assert.ok(Math.abs((b['avg_duration'] as number) - avg) <= 0.005 + 1e-9);
            const sorted = [...g.durs].sort((x, y) => x - y);
            const p95 = sorted[Math.ceil(0.95 * sorted.length) - 1]!;
            assert.ok(Math.abs((b['p95_duration'] as number) - p95) <= p95 * 0.01 + 0.005, `p95 ${b['p95_duration']} vs ${p95}`);
          }
        }
      });
    }
  }

  test('aggregate filters by category, event types and agent name', () => {
    const buckets = events.aggregate({ tenantId: 't1', projectId: 'p1', from: T0 + 1234, to: T0 + 2 * H + 99_999, groupBy: ['category'], metrics: ['count'], filter: { eventTypes: ['llm_call', 'turn'], agentName: 'alpha' } });
    const exp = naive(data.filter((e) => ['llm_call', 'turn'].includes(e.event_type) && e.agent_name === 'alpha'), T0 + 1234, T0 + 2 * H + 99_999, ['category']);
    assert.deepEqual(buckets, [...exp.entries()].sort().map(([k, g]) => ({ category: k, count: g.count })));
  });

  test('another tenant sees only its own events', () => {
    const buckets = events.aggregate({ tenantId: 't2', projectId: 'p1', from: T0, to: T0 + 3 * H, groupBy: [], metrics: ['count'] });
    assert.deepEqual(buckets, [{ count: 100 }]);
  });

  test('query pages newest first with total and hasMore; filters match a naive filter', () => {
    const from = T0 + 61_001;
    const to = T0 + 2 * H + 59_000;
    const inRange = data.filter((e) => Date.parse(e.timestamp) >= from && Date.parse(e.timestamp) < to);
    const page = events.query({ tenantId: 't1', projectId: 'p1', from, to, limit: 50, offset: 10 });
    assert.equal(page.total, inRange.length);
    assert.equal(page.hasMore, true);
    assert.deepEqual(page.events.map((e) => e.id), inRange.slice().reverse().slice(10, 60).map((e) => e.id));
    const first = page.events[0]!;
    assert.equal(Object.hasOwn(first, 'tenantId'), false);
    const cases = [
      { category: 'llm' as const },
      { eventTypes: ['tool_call', 'turn'] },
      { agentName: 'beta' },
      { hasError: true },
      { hasError: false, category: 'tool' as const },
      { sessionId: 's3' },
      { sessionId: 's4', hasError: true },
    ];
    for (const f of cases) {
      const expected = inRange.filter((e) =>
        (f.category === undefined || e.category === f.category) && (f.eventTypes === undefined || f.eventTypes.includes(e.event_type)) &&
        (f.agentName === undefined || e.agent_name === f.agentName) && (f.hasError === undefined || Boolean(e.error) === f.hasError) &&
        (f.sessionId === undefined || e.session_id === f.sessionId));
      const p = events.query({ tenantId: 't1', projectId: 'p1', from, to, limit: 7, offset: 3, order: 'asc', ...f });
      assert.equal(p.total, expected.length, JSON.stringify(f));
      assert.deepEqual(p.events.map((e) => e.id), expected.slice(3, 10).map((e) => e.id), JSON.stringify(f));
      assert.equal(p.hasMore, expected.length > 10);
    }
    const last = events.query({ tenantId: 't1', projectId: 'p1', from, to, limit: 100, offset: inRange.length - 5 });
    assert.equal(last.events.length, 5);
    assert.equal(last.hasMore, false);
  });

  test('a filtered page larger than one scan chunk is complete and in order', () => {
    const p = events.query({ tenantId: 't1', projectId: 'p1', from: T0, to: T0 + 3 * H, hasError: false, limit: 10_000 });
    const expected = data.filter((e) => !e.error).reverse();
    assert.equal(p.total, expected.length);
    assert.deepEqual(p.events.map((e) => e.id), expected.map((e) => e.id));
  });

  test('sessionEvents returns the whole session oldest first, as stored', () => {
    const s = events.sessionEvents('t1', 'p1', 's5');
    const expected = data.filter((e) => e.session_id === 's5');
    assert.deepEqual(s.map((e) => e.id), expected.map((e) => e.id));
    const { tenantId: _t, projectId: _p, ...view } = expected[0]!;
    assert.deepEqual(s[0], view);
    assert.deepEqual(events.sessionEvents('t2', 'p1', 'nope'), []);
  });

  test('the histogram reports within 1% of any duration', () => {
    for (const d of [0, 1, 63, 64, 65, 100, 999, 12_345, 3_600_000]) {
      const v = bucketValue(bucketOf(d));
      assert.ok(Math.abs(v - d) <= d * 0.01 + 1e-9, `${d} -> ${v}`);
    }
  });

  test('sweep deletes events, session index entries and rollups older than the retention', async () => {
    const swept = new EventStore(store, { retentionDays: 1 });
    // "now" is one day after T0 + 1.5 h: everything before T0 + 1.5 h expires.
    const now = T0 + 1.5 * H + 86_400_000;
    const removed = await swept.sweep(now, 300);
    const expiredT1 = data.filter((e) => Date.parse(e.timestamp) < T0 + 1.5 * H).length;
    assert.equal(removed, expiredT1 + 100);
    const left = events.query({ tenantId: 't1', projectId: 'p1', from: 0, to: T0 + 10 * H, limit: 10_000, order: 'asc' });
    assert.equal(left.total, data.length - expiredT1);
    assert.ok(Date.parse(left.events[0]!.timestamp) >= T0 + 1.5 * H);
    assert.ok(events.sessionEvents('t1', 'p1', 's1').every((e) => Date.parse(e.timestamp) >= T0 + 1.5 * H));
    // Hour 0 is wholly expired: its rollup is gone; hour 1 (half expired) stays until it is whole.
    const hours = events.aggregate({ tenantId: 't1', projectId: 'p1', from: T0, to: T0 + 3 * H, groupBy: ['hour'], metrics: ['count'] });
    assert.deepEqual(hours.map((b) => b['hour']), [new Date(T0 + H).toISOString(), new Date(T0 + 2 * H).toISOString()]);
  });
});

describe('analytics event blocks', () => {
  // Many small batches whose events interleave in time: their blocks overlap, share milliseconds
  // and number more than one key chunk, so every read must merge them back into (timestamp, id) order.
  // The 2.5 s straddle the minute M: the session index and the sweep work by the minute.
  const M = Date.UTC(2030, 5, 1, 12, 0, 0);
  const B0 = M - 1250;
  function interleaved(): AnalyticsEvent[] {
    const ids = new EventIdGenerator();
    const out: AnalyticsEvent[] = [];
    for (let i = 0; i < 3000; i++) {
      const ts = B0 + ((i * 7919) % 2500);
      out.push({
        id: ids.next(ts), tenantId: 'tb', projectId: 'pb', category: i % 3 === 0 ? 'llm' : 'tool', event_type: i % 3 === 0 ? 'llm_call' : 'tool_call',
        agent_name: i % 2 ? 'alpha' : 'beta', session_id: `s${i % 7}`, channel: 'api', timestamp: new Date(ts).toISOString(), duration_ms: i % 50,
        error: i % 13 === 0 ? 'x' : null, span_id: null, parent_span_id: null, metadata: {},
      });
    }
    return out;
  }
  const order = (a: AnalyticsEvent, b: AnalyticsEvent): number => Date.parse(a.timestamp) - Date.parse(b.timestamp) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

  test('overlapping blocks read back in exact order, filtered, paged, by session (compacted or not) and after a sweep by the minute', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-blocks-'));
    const store = new LmdbStore({ path: dir, durability: 'commit' });
    try {
      const events = new EventStore(store, { retentionDays: 1 });
      const data = interleaved();
      // Batches of 5 spread over the whole 2.5 s: about 600 overlapping blocks.
      for (let i = 0; i < data.length; i += 5) await events.write(data.slice(i, i + 5));
      const sorted = [...data].sort(order);
      const q = { tenantId: 'tb', projectId: 'pb', from: B0 + 100, to: B0 + 2400 };
      const inRange = sorted.filter((e) => Date.parse(e.timestamp) >= q.from && Date.parse(e.timestamp) < q.to);
      const asc = events.query({ ...q, limit: 10_000, order: 'asc' });
      assert.equal(asc.total, inRange.length);
      assert.deepEqual(asc.events.map((e) => e.id), inRange.map((e) => e.id));
      const desc = events.query({ ...q, limit: 10_000 });
      assert.deepEqual(desc.events.map((e) => e.id), inRange.map((e) => e.id).reverse());
      const errors = inRange.filter((e) => e.error !== null && e.agent_name === 'alpha');
      const page = events.query({ ...q, hasError: true, agentName: 'alpha', limit: 5, offset: 3, order: 'asc' });
      assert.equal(page.total, errors.length);
      assert.deepEqual(page.events.map((e) => e.id), errors.slice(3, 8).map((e) => e.id));
      const scanned: string[] = [];
      events.scan('tb', 'pb', q.from, q.to, (v) => void scanned.push(v[0]));
      assert.deepEqual(scanned, inRange.map((e) => e.id));
      const s3 = sorted.filter((e) => e.session_id === 's3').map((e) => e.id);
      assert.deepEqual(events.sessionEvents('tb', 'pb', 's3').map((e) => e.id), s3);

      // Compacting folds the closed minute before M (not the open one: "now" is within its grace);
      // a late event in the folded minute is merged into its window entry on the next pass.
      assert.ok((await events.compactSessions(M + 6000)) > 0);
      assert.deepEqual(events.sessionEvents('tb', 'pb', 's3').map((e) => e.id), s3);
      const late = { ...data[3]!, id: new EventIdGenerator().next(M - 5000), timestamp: new Date(M - 5000).toISOString() };
      await events.write([late]);
      assert.ok((await events.compactSessions(M + 70_000)) > 0);
      const withLate = [...data, late].sort(order);
      assert.deepEqual(events.sessionEvents('tb', 'pb', 's3').map((e) => e.id), withLate.filter((e) => e.session_id === 's3').map((e) => e.id));
      assert.equal(await events.compactSessions(M + 70_000), 0);

      // The sweep rounds its cutoff down to the minute M: every block that ended before M goes,
      // with its window entries; a block that straddles M stays whole.
      const removed = await events.sweep(M + 1234 + 86_400_000, 200);
      const left = events.query({ tenantId: 'tb', projectId: 'pb', from: 0, to: B0 + 10_000, limit: 10_000, order: 'asc' });
      assert.equal(removed + left.total, withLate.length);
      assert.ok(removed > 0);
      const leftIds = new Set(left.events.map((e) => e.id));
      for (const e of withLate) {
        const ts = Date.parse(e.timestamp);
        if (ts >= M) assert.ok(leftIds.has(e.id), `${e.id} at M + ${ts - M} ms was swept`);
        if (ts < M - 1000) assert.ok(!leftIds.has(e.id), `${e.id} at M - ${M - ts} ms was kept`);
      }
      const live = withLate.filter((e) => leftIds.has(e.id));
      assert.deepEqual(left.events.map((e) => e.id), live.map((e) => e.id));
      assert.deepEqual(events.sessionEvents('tb', 'pb', 's3').map((e) => e.id), live.filter((e) => e.session_id === 's3').map((e) => e.id));
      const [bucket] = events.aggregate({ tenantId: 'tb', projectId: 'pb', from: M - 60_000, to: M + 60_000, groupBy: [], metrics: ['count'] });
      assert.equal(bucket?.['count'], live.length);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
