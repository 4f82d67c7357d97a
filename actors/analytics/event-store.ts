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
 *  - `write(events)` (ids given: POST …/analytics/events), `writeNew(events)` (ids assigned: the
 *    recorder), `writeEncoded(batches)` (the writer thread) — each stores in one transaction.
 *  - `sweep(nowMs)` — deletes what is older than the retention; `compactSessions(nowMs)` folds
 *    the session index (the writer thread runs it).
 *
 * Collections: `analytics-blocks` (event-blocks.ts); `analytics-postings` and
 * `analytics-session-windows` (session-index.ts);
 * `analytics-rollups` (rollups.ts); `analytics-counts`; `analytics-projects` [tenantId, projectId]
 * → first write time (what the retention sweep walks).
 */
import type { Collection, Key, Store } from '../../runtime/index.js';
import type { AnalyticsEvent, EventCategory, NewAnalyticsEvent } from './analytics-event.js';
import { Aggregator, type AnyDimension, type Metric, type MetricBucket, type RowDims } from './aggregation.js';
import { encodeBatch, type EncodedBatch } from './event-batch.js';
import { byTimeAndId, countEvents, eachEvent, walkBlocks, type BlockKey, type BlockValue } from './event-blocks.js';
import { SessionIndex, windowOf } from './session-index.js';
import { costOf, decodeEvent, EventIdGenerator, F, metaString, storedEventOf, tokensOf, toEventRow, type EventRow, type EventView, type StoredEvent } from './event-codec.js';
import { GRANULARITY_MS, mergeRollup, RollupDelta, type RollupChanges, type CountValue, type Granularity, type RollupKey, type RollupValue } from './rollups.js';

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

/** Events, rollups and their queries (see the file comment for the public API). */
export class EventStore {
  readonly #store: Store;
  readonly #blocks: Collection<BlockValue>;
  readonly #sessions: SessionIndex;
  readonly #rollups: Collection<RollupValue>;
  readonly #counts: Collection<CountValue>;
  readonly #projects: Collection<number>;
  readonly #knownProjects = new Set<string>();
  readonly #ids = new EventIdGenerator();
  readonly retentionMs: number;

  constructor(store: Store, options: EventStoreOptions) {
    this.#store = store;
    this.#blocks = store.collection('analytics-blocks');
    this.#sessions = new SessionIndex(store);
    this.#rollups = store.collection('analytics-rollups');
    this.#counts = store.collection('analytics-counts');
    this.#projects = store.collection('analytics-projects');
    this.retentionMs = options.retentionDays * DAY_MS;
  }

  /** Stores a batch of events and updates their rollups, all in one transaction. */
  write(events: readonly AnalyticsEvent[]): Promise<void> {
    return this.#writeRows(events.map(toEventRow));
  }

  /** Stores new events under fresh ids (EventWriter), in one transaction. */
  writeNew(events: readonly NewAnalyticsEvent[]): Promise<void> {
    return this.#writeRows(this.rowsOf(events));
  }

  /** The rows of new events, with ids from this store's generator (time-ordered, unique across threads). */
  rowsOf(events: readonly NewAnalyticsEvent[]): EventRow[] {
    return events.map((e) => {
      const ts = Date.parse(e.timestamp);
      return [e.tenantId, e.projectId, ts, storedEventOf(e, this.#ids.next(ts))];
    });
  }

  /** Stores a batch of event rows and updates their rollups, all in one transaction. */
  #writeRows(rows: readonly EventRow[]): Promise<void> {
    return rows.length === 0 ? Promise.resolve() : this.writeEncoded([encodeBatch(rows)]);
  }

  /** Stores batches encoded by encodeBatch (on this thread or another) in one transaction. */
  async writeEncoded(batches: readonly EncodedBatch[]): Promise<void> {
    const newProjects = new Map<string, [string, string]>();
    for (const batch of batches) {
      for (const [tenantId, projectId] of batch.projects) {
        const pid = `${tenantId}\u0000${projectId}`;
        if (!this.#knownProjects.has(pid)) newProjects.set(pid, [tenantId, projectId]);
      }
    }
    await this.#store.transaction(() => {
      for (const batch of batches) {
        for (const block of batch.blocks) {
          this.#blocks.putPreparedSync(block.key, block.value);
          this.#sessions.addBlock(block.key, block.sessions);
        }
        this.#applyDelta(batch, 1);
      }
      for (const key of newProjects.values()) if (this.#projects.get(key) === undefined) this.#projects.putSync(key, Date.now());
    });
    for (const pid of newProjects.keys()) this.#knownProjects.add(pid);
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
    const filtered = hasEventFilter(q);
    const events: EventView[] = [];
    let skip = offset;
    if (limit > 0 && offset < total) {
      walkBlocks(this.#blocks, q.tenantId, q.projectId, q.from, q.to, desc, (v, ts) => {
        if (filtered && !matchesEvent(v, ts, q)) return true;
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
    walkBlocks(this.#blocks, tenantId, projectId, from, to, false, (v, ts) => visit(v, ts) !== false);
  }

  /** Grouped metrics over [from, to): rollups for whole hours and minutes, raw events at the edges. */
  aggregate(q: AggregateQuery): MetricBucket[] {
    const agg = new Aggregator(q.groupBy, q.metrics);
    const filter = q.filter ?? {};
    const dims: RowDims = { category: '', event_type: '', agent_name: '', channel: '', provider: '', model: '' };
    for (const seg of plan(q.from, q.to)) {
      if (seg.kind === 'raw') {
        eachEvent(this.#blocks, q.tenantId, q.projectId, seg.from, seg.to, (v, ts) => {
          if (!matchesDims(v[F.category], v[F.eventType], v[F.agent] ?? '', v[F.channel] ?? '', filter)) return true;
          setEventDims(dims, v);
          agg.addEvent(dims, ts, v[F.error] !== null, typeof v[F.duration] === 'number' ? v[F.duration] : null, tokensOf(v[F.metadata]), costOf(v[F.metadata]));
          return true;
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
   * Deletes the blocks older than the retention, in transactions of about `batchSize` events,
   * with their session index entries, and subtracts their events from the rollups (a rollup that
   * reaches zero goes), so a partly expired hour stays exact. Whole session-index windows expire
   * together, so the cutoff is rounded down to a window (a minute), and a block goes once its
   * last event has expired. Returns how many events went.
   */
  async sweep(nowMs = Date.now(), batchSize = 1000): Promise<number> {
    const cutoff = windowOf(nowMs - this.retentionMs);
    let removed = 0;
    for (const [tenantId, projectId] of this.#projectList()) {
      for (;;) {
        if (!this.#store.isOpen) return removed;
        const batch: { key: BlockKey; value: BlockValue }[] = [];
        let events = 0;
        for (const key of this.#blocks.keys({ prefix: [tenantId, projectId], end: [tenantId, projectId, cutoff], limit: batchSize }) as BlockKey[]) {
          const value = this.#blocks.get(key);
          if (!value) continue;
          batch.push({ key, value });
          events += value[0].length;
          if (events >= batchSize) break;
        }
        if (batch.length === 0) break;
        const delta = new RollupDelta();
        for (const { value } of batch) for (let i = 0; i < value[0].length; i++) delta.addEvent(tenantId, projectId, value[0][i]!, value[1][i]!);
        await this.#store.transaction(() => {
          for (const { key, value } of batch) this.#removeBlock(key, value);
          this.#applyDelta(delta, -1);
        });
        removed += events;
      }
    }
    return removed;
  }

  /** Folds closed minutes of the session index (session-index.ts); the writer thread calls it. */
  compactSessions(nowMs = Date.now()): Promise<number> {
    return this.#sessions.compact(this.#projectList(), nowMs);
  }

  #projectList(): [string, string][] {
    return this.#projects.range({ prefix: [] }).map(({ key }) => key as [string, string]);
  }

  /** Inside a transaction: deletes a block and its session index entries. */
  #removeBlock(key: BlockKey, value: BlockValue): void {
    this.#blocks.removeSync(key);
    const sessions = new Set<string>();
    for (const v of value[1]) {
      const session = v[F.session];
      if (session) sessions.add(session);
    }
    this.#sessions.removeBlock(key, sessions);
  }

  /** Inside a transaction: adds (1) or subtracts (-1) a delta to the stored rollups and counts. */
  #applyDelta(delta: RollupChanges, sign: 1 | -1): void {
    for (const { key, value } of delta.rollups) {
      const old = this.#rollups.get(key);
      const next = old ? mergeRollup(old, value, sign) : sign === 1 ? value : null;
      if (!next) continue;
      if (next[0] <= 0) this.#rollups.removeSync(key);
      else this.#rollups.putSync(key, next);
    }
    for (const { key, value } of delta.counts) {
      const old = this.#counts.get(key) ?? [0, 0];
      const next: CountValue = [old[0] + sign * value[0], old[1] + sign * value[1]];
      if (next[0] <= 0) this.#counts.removeSync(key);
      else this.#counts.putSync(key, next);
    }
  }

  /** A session's events in [from, to), oldest first: its index entries name the blocks and positions. */
  #sessionStored(tenantId: string, projectId: string, sessionId: string, from: number, to: number): [StoredEvent, number][] {
    const out: [StoredEvent, number][] = [];
    for (const { key, positions } of this.#sessions.blocksOf(tenantId, projectId, sessionId)) {
      const block = this.#blocks.get(key);
      if (!block) continue;
      for (const i of positions) {
        const ts = block[0][i]!;
        if (ts >= from && ts < to) out.push([block[1][i]!, ts]);
      }
    }
    return out.sort((a, b) => byTimeAndId(a[1], a[0], b[1], b[0]));
  }

  /** Number of events matching q (not sessionId): counts and rollups for whole buckets, raw events at the edges. */
  #count(q: EventQuery): number {
    const dimFilter = q.category !== undefined || q.eventTypes !== undefined || q.agentName !== undefined || q.channel !== undefined;
    const pick = (count: number, errors: number): number => (q.hasError === true ? errors : q.hasError === false ? count - errors : count);
    let total = 0;
    for (const seg of plan(q.from, q.to)) {
      if (seg.kind === 'raw') {
        if (!dimFilter && q.hasError === undefined) total += countEvents(this.#blocks, q.tenantId, q.projectId, seg.from, seg.to);
        else {
          eachEvent(this.#blocks, q.tenantId, q.projectId, seg.from, seg.to, (v, ts) => {
            if (matchesEvent(v, ts, q)) total++;
            return true;
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

function setEventDims(dims: RowDims, v: StoredEvent): void {
  dims.category = v[F.category];
  dims.event_type = v[F.eventType];
  dims.agent_name = v[F.agent] ?? '';
  dims.channel = v[F.channel] ?? '';
  const llm = v[F.category] === 'llm';
  dims.provider = llm ? metaString(v[F.metadata], 'provider') : '';
  dims.model = llm ? metaString(v[F.metadata], 'model') : '';
}
