/**
 * Time-ordered storage of analytics events in LMDB, with the rollups that keep metrics cheap.
 *
 * Public API (stable; the traces and voice endpoints read through it):
 *  - `query(q: EventQuery): EventPage` — one page of events in [q.from, q.to) (ms), newest first
 *    unless q.order is 'asc', with every filter, total and hasMore.
 *  - `sessionEvents(tenantId, projectId, sessionId): EventView[]` — every event of one session,
 *    oldest first (the session index makes it a prefix scan).
 *  - `aggregate(q: AggregateQuery): MetricBucket[]` — grouped metrics in the bucket form.
 *  - `scan(tenantId, projectId, from, to, visit)` — every event in a range, oldest first.
 *  - `write(events)` — stores a batch in one transaction (the recorder and POST …/analytics/events).
 *  - `sweep(nowMs)` — deletes what is older than the retention.
 *
 * Collections: `analytics-events` [tenantId, projectId, timestampMs, id] → StoredEvent;
 * `analytics-session-index` [tenantId, projectId, sessionId, timestampMs, id] → 1;
 * `analytics-rollups` (rollups.ts); `analytics-counts`; `analytics-projects` [tenantId, projectId]
 * → first write time (what the retention sweep walks).
 */
import type { Collection, Key, Store } from '../../runtime/index.js';
import type { AnalyticsEvent, EventCategory } from './analytics-event.js';
import { Aggregator, type AnyDimension, type Metric, type MetricBucket, type RowDims } from './aggregation.js';
import { costOf, decodeEvent, encodeEvent, F, metaString, tokensOf, type EventView, type StoredEvent } from './event-codec.js';
import { GRANULARITY_MS, mergeRollup, RollupDelta, type CountValue, type Granularity, type RollupKey, type RollupValue } from './rollups.js';

/** Filters of an event query; all given ones must match. */
export interface EventFilter {
  category?: EventCategory;
  /** Any of these event types. */
  eventTypes?: readonly string[];
  agentName?: string;
  channel?: string;
  sessionId?: string;
  /** true: only events with an error; false: only events without. */
  hasError?: boolean;
}

/** A page query over [from, to) in epoch ms. */
export interface EventQuery extends EventFilter {
  tenantId: string;
  projectId: string;
  from: number;
  to: number;
  /** Default 100. */
  limit?: number;
  /** Default 0. */
  offset?: number;
  /** Default 'desc' (newest first). */
  order?: 'asc' | 'desc';
}

/** One page of events, the number matching in all, and whether more follow this page. */
export interface EventPage {
  events: EventView[];
  total: number;
  hasMore: boolean;
}

/** Filters an aggregate accepts (the rollups carry these dimensions). */
export type AggregateFilter = Pick<EventFilter, 'category' | 'eventTypes' | 'agentName' | 'channel'>;

/** A grouped metrics query over [from, to) in epoch ms. */
export interface AggregateQuery {
  tenantId: string;
  projectId: string;
  from: number;
  to: number;
  groupBy: readonly AnyDimension[];
  metrics: readonly Metric[];
  filter?: AggregateFilter;
}

/** Options of the event store. */
export interface EventStoreOptions {
  /** Events older than this many days are deleted by sweep(). */
  retentionDays: number;
}

type Segment = { kind: Granularity | 'raw'; from: number; to: number };

const DAY_MS = 86_400_000;
const SCAN_CHUNK = 2000;

/** Events, rollups and their queries (see the file comment for the public API). */
export class EventStore {
  readonly #store: Store;
  readonly #events: Collection<StoredEvent>;
  readonly #sessions: Collection<1>;
  readonly #rollups: Collection<RollupValue>;
  readonly #counts: Collection<CountValue>;
  readonly #projects: Collection<number>;
  readonly #knownProjects = new Set<string>();
  readonly retentionMs: number;

  constructor(store: Store, options: EventStoreOptions) {
    this.#store = store;
    this.#events = store.collection('analytics-events');
    this.#sessions = store.collection('analytics-session-index');
    this.#rollups = store.collection('analytics-rollups');
    this.#counts = store.collection('analytics-counts');
    this.#projects = store.collection('analytics-projects');
    this.retentionMs = options.retentionDays * DAY_MS;
  }

  /** Stores a batch of events and updates their rollups, all in one transaction. */
  async write(events: readonly AnalyticsEvent[]): Promise<void> {
    if (events.length === 0) return;
    const delta = new RollupDelta();
    const newProjects: [string, string][] = [];
    const rows = events.map((e) => {
      const row = { e, ts: Date.parse(e.timestamp), v: encodeEvent(e) };
      addToDelta(delta, e.tenantId, e.projectId, row.ts, row.v);
      const pid = `${e.tenantId}\u0000${e.projectId}`;
      if (!this.#knownProjects.has(pid)) {
        this.#knownProjects.add(pid);
        newProjects.push([e.tenantId, e.projectId]);
      }
      return row;
    });
    await this.#store.transaction(() => {
      for (const { e, ts, v } of rows) {
        this.#events.putSync([e.tenantId, e.projectId, ts, e.id], v);
        if (e.session_id) this.#sessions.putSync([e.tenantId, e.projectId, e.session_id, ts, e.id], 1);
      }
      this.#applyDelta(delta, 1);
      for (const key of newProjects) if (this.#projects.get(key) === undefined) this.#projects.putSync(key, Date.now());
    });
  }

  /** One page of events matching the query (see EventQuery). */
  query(q: EventQuery): EventPage {
    const limit = q.limit ?? 100;
    const offset = q.offset ?? 0;
    const desc = q.order !== 'asc';
    if (q.sessionId !== undefined) {
      const matches = this.#sessionStored(q.tenantId, q.projectId, q.sessionId, q.from, q.to).filter(([v, ts]) => matchesEvent(v, ts, q));
      if (desc) matches.reverse();
      const events = matches.slice(offset, offset + limit).map(([v, ts]) => decodeEvent(v, ts));
      return { events, total: matches.length, hasMore: offset + events.length < matches.length };
    }
    const total = this.#count(q);
    const prefix = [q.tenantId, q.projectId];
    const start = [q.tenantId, q.projectId, q.from];
    const end = [q.tenantId, q.projectId, q.to];
    let events: EventView[];
    if (!hasEventFilter(q)) {
      events = this.#events.range({ prefix, start, end, reverse: desc, offset, limit }).map((e) => decodeEvent(e.value, e.key[2] as number));
    } else {
      events = [];
      let skip = offset;
      this.#walk(prefix, start, end, desc, (v, ts) => {
        if (!matchesEvent(v, ts, q)) return true;
        if (skip > 0) {
          skip--;
          return true;
        }
        events.push(decodeEvent(v, ts));
        return events.length < limit;
      });
    }
    return { events, total, hasMore: offset + events.length < total };
  }

  /** Every event of a session, oldest first. */
  sessionEvents(tenantId: string, projectId: string, sessionId: string): EventView[] {
    return this.#sessionStored(tenantId, projectId, sessionId, 0, Number.MAX_SAFE_INTEGER).map(([v, ts]) => decodeEvent(v, ts));
  }

  /** Visits every event in [from, to), oldest first; `visit` returns false to stop. */
  scan(tenantId: string, projectId: string, from: number, to: number, visit: (event: StoredEvent, timestampMs: number) => boolean | void): void {
    this.#walk([tenantId, projectId], [tenantId, projectId, from], [tenantId, projectId, to], false, (v, ts) => visit(v, ts) !== false);
  }

  /** Grouped metrics over [from, to): rollups for whole hours and minutes, raw events at the edges. */
  aggregate(q: AggregateQuery): MetricBucket[] {
    const agg = new Aggregator(q.groupBy, q.metrics);
    const filter = q.filter ?? {};
    const dims: RowDims = { category: '', event_type: '', agent_name: '', channel: '', provider: '', model: '' };
    for (const seg of plan(q.from, q.to)) {
      if (seg.kind === 'raw') {
        this.scan(q.tenantId, q.projectId, seg.from, seg.to, (v, ts) => {
          if (!matchesDims(v[F.category], v[F.eventType], v[F.agent] ?? '', v[F.channel] ?? '', filter)) return;
          setEventDims(dims, v);
          agg.addEvent(dims, ts, v[F.error] !== null, typeof v[F.duration] === 'number' ? v[F.duration] : null, tokensOf(v[F.metadata]), costOf(v[F.metadata]));
        });
        continue;
      }
      for (const { key, value } of this.#rollupRange(q.tenantId, q.projectId, seg)) {
        const k = key as RollupKey;
        if (!matchesDims(k[4], k[5], k[6], k[7], filter)) continue;
        dims.category = k[4];
        dims.event_type = k[5];
        dims.agent_name = k[6];
        dims.channel = k[7];
        dims.provider = k[8];
        dims.model = k[9];
        agg.addRollup(dims, k[3], { count: value[0], errors: value[1], durCount: value[2], durSum: value[3], tokens: value[4], cost: value[5] }, value[6]);
      }
    }
    return agg.buckets();
  }

  /**
   * Deletes events and index entries older than the retention, in batches of one transaction
   * each, and subtracts them from their rollups (a rollup that reaches zero goes), so a partly
   * expired hour stays exact. Returns how many events went.
   */
  async sweep(nowMs = Date.now(), batchSize = 1000): Promise<number> {
    const cutoff = nowMs - this.retentionMs;
    let removed = 0;
    for (const { key } of this.#projects.range({ prefix: [] })) {
      const [tenantId, projectId] = key as [string, string];
      for (;;) {
        if (!this.#store.isOpen) return removed;
        const batch = this.#events.range({ prefix: [tenantId, projectId], end: [tenantId, projectId, cutoff], limit: batchSize });
        if (batch.length === 0) break;
        const delta = new RollupDelta();
        for (const { key: k, value } of batch) addToDelta(delta, tenantId, projectId, k[2] as number, value);
        await this.#store.transaction(() => {
          for (const { key: k, value } of batch) {
            this.#events.removeSync(k);
            const session = value[F.session];
            if (session) this.#sessions.removeSync([tenantId, projectId, session, k[2]!, k[3]!]);
          }
          this.#applyDelta(delta, -1);
        });
        removed += batch.length;
      }
    }
    return removed;
  }

  /** Inside a transaction: adds (1) or subtracts (-1) a delta to the stored rollups and counts. */
  #applyDelta(delta: RollupDelta, sign: 1 | -1): void {
    for (const { key, value } of delta.rollups.values()) {
      const old = this.#rollups.get(key);
      const next = old ? mergeRollup(old, value, sign) : value;
      if (next[0] <= 0) this.#rollups.removeSync(key);
      else this.#rollups.putSync(key, next);
    }
    for (const { key, value } of delta.counts.values()) {
      const old = this.#counts.get(key) ?? [0, 0];
      const next: CountValue = [old[0] + sign * value[0], old[1] + sign * value[1]];
      if (next[0] <= 0) this.#counts.removeSync(key);
      else this.#counts.putSync(key, next);
    }
  }

  #sessionStored(tenantId: string, projectId: string, sessionId: string, from: number, to: number): [StoredEvent, number][] {
    const out: [StoredEvent, number][] = [];
    const prefix = [tenantId, projectId, sessionId];
    for (const { key } of this.#sessions.range({ prefix, start: [...prefix, from], end: [...prefix, to] })) {
      const ts = key[3] as number;
      const v = this.#events.get([tenantId, projectId, ts, key[4]!]);
      if (v) out.push([v, ts]);
    }
    return out;
  }

  /** Number of events matching q (not sessionId): counts and rollups for whole buckets, raw events at the edges. */
  #count(q: EventQuery): number {
    const dimFilter = q.category !== undefined || q.eventTypes !== undefined || q.agentName !== undefined || q.channel !== undefined;
    const pick = (count: number, errors: number): number => (q.hasError === true ? errors : q.hasError === false ? count - errors : count);
    let total = 0;
    for (const seg of plan(q.from, q.to)) {
      if (seg.kind === 'raw') {
        if (!dimFilter && q.hasError === undefined) {
          total += this.#events.count([q.tenantId, q.projectId], { start: [q.tenantId, q.projectId, seg.from], end: [q.tenantId, q.projectId, seg.to] });
        } else {
          this.scan(q.tenantId, q.projectId, seg.from, seg.to, (v, ts) => {
            if (matchesEvent(v, ts, q)) total++;
          });
        }
      } else if (!dimFilter) {
        const prefix = [q.tenantId, q.projectId, seg.kind];
        for (const { value } of this.#counts.range({ prefix, start: [...prefix, seg.from], end: [...prefix, seg.to] })) total += pick(value[0], value[1]);
      } else {
        for (const { key, value } of this.#rollupRange(q.tenantId, q.projectId, seg)) {
          if (matchesDims(key[4] as string, key[5] as string, key[6] as string, key[7] as string, q)) total += pick(value[0], value[1]);
        }
      }
    }
    return total;
  }

  #rollupRange(tenantId: string, projectId: string, seg: Segment): { key: Key; value: RollupValue }[] {
    const prefix = [tenantId, projectId, seg.kind];
    return this.#rollups.range({ prefix, start: [...prefix, seg.from], end: [...prefix, seg.to] });
  }

  /** Walks events in [start, end) chunk by chunk, so a filtered page decodes only what it needs. */
  #walk(prefix: Key, start: Key, end: Key, desc: boolean, visit: (v: StoredEvent, ts: number) => boolean): void {
    let lo: Key = start;
    let hi: Key = end;
    let skipFirst = false;
    for (;;) {
      const chunk = this.#events.range({ prefix, start: lo, end: hi, reverse: desc, limit: SCAN_CHUNK + (skipFirst ? 1 : 0) });
      let i = skipFirst ? 1 : 0;
      if (skipFirst && (chunk.length === 0 || !sameKey(chunk[0]!.key, lo))) i = 0;
      for (; i < chunk.length; i++) {
        const e = chunk[i]!;
        if (!visit(e.value, e.key[2] as number)) return;
      }
      if (chunk.length < SCAN_CHUNK) return;
      const last = chunk[chunk.length - 1]!.key;
      // Descending, the end bound is exclusive already; ascending, the start is inclusive, so the
      // next chunk begins at the last key and skips it.
      if (desc) hi = last;
      else {
        lo = last;
        skipFirst = true;
      }
    }
  }
}

/** Splits [from, to) into whole hours, whole minutes and raw edges. */
export function plan(from: number, to: number): Segment[] {
  if (to <= from) return [];
  const H = GRANULARITY_MS.h;
  const h0 = Math.ceil(from / H) * H;
  const h1 = Math.floor(to / H) * H;
  if (h0 >= h1) return minutes(from, to);
  return [...minutes(from, h0), { kind: 'h', from: h0, to: h1 }, ...minutes(h1, to)];
}

function minutes(from: number, to: number): Segment[] {
  if (to <= from) return [];
  const M = GRANULARITY_MS.m;
  const m0 = Math.ceil(from / M) * M;
  const m1 = Math.floor(to / M) * M;
  if (m0 >= m1) return [{ kind: 'raw', from, to }];
  const out: Segment[] = [];
  if (from < m0) out.push({ kind: 'raw', from, to: m0 });
  out.push({ kind: 'm', from: m0, to: m1 });
  if (m1 < to) out.push({ kind: 'raw', from: m1, to });
  return out;
}

function hasEventFilter(f: EventFilter): boolean {
  return f.category !== undefined || f.eventTypes !== undefined || f.agentName !== undefined || f.channel !== undefined || f.sessionId !== undefined || f.hasError !== undefined;
}

function matchesDims(category: string, eventType: string, agent: string, channel: string, f: AggregateFilter): boolean {
  if (f.category !== undefined && category !== f.category) return false;
  if (f.eventTypes !== undefined && !f.eventTypes.includes(eventType)) return false;
  if (f.agentName !== undefined && agent !== f.agentName) return false;
  if (f.channel !== undefined && channel !== f.channel) return false;
  return true;
}

function matchesEvent(v: StoredEvent, _ts: number, f: EventFilter): boolean {
  if (!matchesDims(v[F.category], v[F.eventType], v[F.agent] ?? '', v[F.channel] ?? '', f)) return false;
  if (f.sessionId !== undefined && v[F.session] !== f.sessionId) return false;
  if (f.hasError !== undefined && (v[F.error] !== null) !== f.hasError) return false;
  return true;
}

/** Adds a stored event to the rollup delta of its hour and minute. */
function addToDelta(delta: RollupDelta, tenantId: string, projectId: string, ts: number, v: StoredEvent): void {
  const md = v[F.metadata];
  const llm = v[F.category] === 'llm';
  delta.add(tenantId, projectId, ts, [v[F.category], v[F.eventType], v[F.agent] ?? '', v[F.channel] ?? '', llm ? metaString(md, 'provider') : '', llm ? metaString(md, 'model') : ''],
    v[F.error] !== null, v[F.duration], tokensOf(md), costOf(md));
}

function setEventDims(dims: RowDims, v: StoredEvent): void {
  dims.category = v[F.category];
  dims.event_type = v[F.eventType];
  dims.agent_name = v[F.agent] ?? '';
  dims.channel = v[F.channel] ?? '';
  const llm = v[F.category] === 'llm';
  dims.provider = llm ? metaString(v[F.metadata], 'provider') : '';
  dims.model = llm ? metaString(v[F.metadata], 'model') : '';
}

function sameKey(a: Key, b: Key): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
