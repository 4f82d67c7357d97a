/**
 * How events are laid out in LMDB: in blocks, one value per run of at most BLOCK_EVENTS events
 * of one project whose timestamps span less than BLOCK_SPAN_MS. A batch of a thousand events
 * costs a handful of puts instead of two per event, which is what lets recording keep up with
 * tens of thousands of events per second (docs/analytics.md, "Storage").
 *
 * Block key [tenantId, projectId, lastTs, firstTs, count, blockId] → [timestamps, stored events],
 * both in (timestamp, id) order. The key carries the block's time span and size, so a range
 * walk picks blocks, and a count adds whole blocks, from keys alone. blockId is the id of the
 * block's first event (unique: ids are).
 *
 * Which blocks hold a session's events is the session index's (session-index.ts).
 *
 * Blocks of one project may overlap in time (several writers, late events); the walks below
 * merge them into exact (timestamp, id) order. They rely on one bound: every event of a block
 * lies in (lastTs - BLOCK_SPAN_MS, lastTs].
 */
import type { Collection, Key } from '../../runtime/index.js';
import { F, type EventRow, type StoredEvent } from './event-codec.js';

/** Most events in one block. */
export const BLOCK_EVENTS = 1000;
/** A block's events lie within this many ms of its last one (exclusive). */
export const BLOCK_SPAN_MS = 1000;

/** [tenantId, projectId, lastTs, firstTs, count, blockId]. */
export type BlockKey = [string, string, number, number, number, string];
/** [timestamps, stored events], in (timestamp, id) order. */
export type BlockValue = [number[], StoredEvent[]];
/** A block to write, with the positions of each session's events in it. */
export interface NewBlock {
  key: BlockKey;
  value: BlockValue;
  sessions: Map<string, number[]>;
}

const KEY_CHUNK = 256;

/** The (timestamp, id) order events are stored and read in. */
export function byTimeAndId(tsA: number, a: StoredEvent, tsB: number, b: StoredEvent): number {
  return tsA - tsB || (a[F.id] < b[F.id] ? -1 : a[F.id] > b[F.id] ? 1 : 0);
}

/** (timestamp, id) order of rows. */
export function compareRows(a: EventRow, b: EventRow): number {
  return byTimeAndId(a[2], a[3], b[2], b[3]);
}

/** Cuts one project's rows, already in (timestamp, id) order, into blocks. */
export function cutBlocks(tenantId: string, projectId: string, rows: readonly EventRow[]): NewBlock[] {
  const blocks: NewBlock[] = [];
  let i = 0;
  while (i < rows.length) {
    const first = rows[i]![2];
    let j = i;
    while (j < rows.length && j - i < BLOCK_EVENTS && rows[j]![2] - first < BLOCK_SPAN_MS) j++;
    blocks.push(blockOf(tenantId, projectId, rows.slice(i, j)));
    i = j;
  }
  return blocks;
}

/** The block of rows in (timestamp, id) order (at least one, within the span). */
export function blockOf(tenantId: string, projectId: string, rows: readonly EventRow[]): NewBlock {
  const ts: number[] = new Array(rows.length);
  const events: StoredEvent[] = new Array(rows.length);
  const sessions = new Map<string, number[]>();
  for (let k = 0; k < rows.length; k++) {
    const row = rows[k]!;
    ts[k] = row[2];
    events[k] = row[3];
    const session = row[3][F.session];
    if (session) {
      const at = sessions.get(session);
      if (at) at.push(k);
      else sessions.set(session, [k]);
    }
  }
  const key: BlockKey = [tenantId, projectId, ts[ts.length - 1]!, ts[0]!, rows.length, events[0]![F.id]];
  return { key, value: [ts, events], sessions };
}

type Visit = (v: StoredEvent, ts: number) => boolean;
type Pending = { ts: number; v: StoredEvent };

const ascending = (a: Pending, b: Pending): number => byTimeAndId(a.ts, a.v, b.ts, b.v);
const descending = (a: Pending, b: Pending): number => ascending(b, a);

/**
 * Visits the events of [from, to) in (timestamp, id) order, newest first when `desc`; `visit`
 * returns false to stop. Blocks are read one at a time; an event is handed out as soon as no
 * block still unread can hold one that sorts before it.
 */
export function walkBlocks(blocks: Collection<BlockValue>, tenantId: string, projectId: string, from: number, to: number, desc: boolean, visit: Visit): void {
  if (to <= from) return;
  let pending: Pending[] = [];
  // Hands out the pending events that sort before `bound` (after it, descending); false: stop.
  const release = (bound: number): boolean => {
    if (pending.length === 0) return true;
    const ready: Pending[] = [];
    const rest: Pending[] = [];
    for (const p of pending) ((desc ? p.ts > bound : p.ts < bound) ? ready : rest).push(p);
    if (ready.length === 0) return true;
    pending = rest;
    ready.sort(desc ? descending : ascending);
    for (const p of ready) if (!visit(p.v, p.ts)) return false;
    return true;
  };
  const read = (key: BlockKey): void => {
    if (key[3] >= to || key[2] < from) return;
    const value = blocks.get(key);
    if (!value) return;
    const [ts, events] = value;
    for (let i = 0; i < ts.length; i++) if (ts[i]! >= from && ts[i]! < to) pending.push({ ts: ts[i]!, v: events[i]! });
  };
  let ok = true;
  forEachBlockKey(blocks, tenantId, projectId, from, to, desc, (key, nextFirstBound) => {
    if (desc) {
      // Every block still unread ends at or before this one's last timestamp.
      if (!release(key[2])) return (ok = false);
      read(key);
    } else {
      read(key);
      if (!release(nextFirstBound)) return (ok = false);
    }
    return true;
  });
  if (ok) release(desc ? -Infinity : Infinity);
}

/** Visits the events of [from, to) block by block, in no particular order; `visit` returns false to stop. */
export function eachEvent(blocks: Collection<BlockValue>, tenantId: string, projectId: string, from: number, to: number, visit: Visit): void {
  forEachBlockKey(blocks, tenantId, projectId, from, to, false, (key) => {
    if (key[3] >= to || key[2] < from) return true;
    const value = blocks.get(key);
    if (!value) return true;
    const [ts, events] = value;
    for (let i = 0; i < ts.length; i++) if (ts[i]! >= from && ts[i]! < to && !visit(events[i]!, ts[i]!)) return false;
    return true;
  });
}

/** Number of events in [from, to): blocks inside it counted from their keys, edge blocks read. */
export function countEvents(blocks: Collection<BlockValue>, tenantId: string, projectId: string, from: number, to: number): number {
  let n = 0;
  forEachBlockKey(blocks, tenantId, projectId, from, to, false, (key) => {
    if (key[3] >= to || key[2] < from) return true;
    if (key[3] >= from && key[2] < to) n += key[4];
    else {
      const ts = blocks.get(key)?.[0] ?? [];
      for (const t of ts) if (t >= from && t < to) n++;
    }
    return true;
  });
  return n;
}

/**
 * Visits, chunk by chunk, the keys of the blocks that may hold events of [from, to): those whose
 * last timestamp lies in [from, to + BLOCK_SPAN_MS). Ascending, `nextFirstBound` is a lower bound
 * of the first timestamp of every block not yet visited. `visit` returns false to stop.
 */
function forEachBlockKey(blocks: Collection<BlockValue>, tenantId: string, projectId: string, from: number, to: number, desc: boolean, visit: (key: BlockKey, nextFirstBound: number) => boolean): void {
  const prefix = [tenantId, projectId];
  let lo: Key = [tenantId, projectId, from];
  let hi: Key = [tenantId, projectId, to + BLOCK_SPAN_MS];
  let after: Key | undefined;
  for (;;) {
    const keys = blocks.keys({ prefix, start: lo, end: hi, reverse: desc, limit: KEY_CHUNK + (after ? 1 : 0) }) as BlockKey[];
    const start = after && keys.length > 0 && sameKey(keys[0]!, after) ? 1 : 0;
    // Ascending: the smallest first timestamp among the keys after each one in this chunk; past
    // the chunk, blocks end at or after its last key, so they start after lastTs - span.
    let suffixMin = Infinity;
    const bounds: number[] = new Array(keys.length);
    if (!desc) {
      const tail = keys.length > 0 ? keys[keys.length - 1]![2] - BLOCK_SPAN_MS + 1 : Infinity;
      suffixMin = keys.length === KEY_CHUNK + (after ? 1 : 0) ? tail : Infinity;
      for (let i = keys.length - 1; i >= 0; i--) {
        bounds[i] = suffixMin;
        suffixMin = Math.min(suffixMin, keys[i]![3]);
      }
    }
    for (let i = start; i < keys.length; i++) if (!visit(keys[i]!, bounds[i] ?? Infinity)) return;
    if (keys.length - start < KEY_CHUNK) return;
    const last = keys[keys.length - 1]!;
    if (desc) hi = last;
    else {
      lo = last;
      after = last;
    }
  }
}

function sameKey(a: Key, b: Key): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
