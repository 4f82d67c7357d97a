/**
 * Per-hour and per-minute rollups, maintained in the same transaction as the events they sum.
 * A metrics query over a long range reads rollups for the whole hours and minutes inside it and
 * scans raw events only at its sub-minute edges (docs/analytics.md, "How queries are answered").
 */
import { addToSparse } from './duration-histogram.js';
import { costOf, F, metaString, tokensOf, type StoredEvent } from './event-codec.js';

/** Rollup granularities: 'h' hour, 'm' minute. */
export type Granularity = 'h' | 'm';
/** Length of each granularity in ms. */
export const GRANULARITY_MS: Readonly<Record<Granularity, number>> = { h: 3_600_000, m: 60_000 };

/** Rollup key: [tenantId, projectId, granularity, bucketStartMs, category, event_type, agent_name, channel, provider, model] ('' for null). */
export type RollupKey = [string, string, Granularity, number, string, string, string, string, string, string];
/** Rollup value: [count, errors, durationCount, durationSum, tokens, cost, sparse duration histogram]. */
export type RollupValue = [number, number, number, number, number, number, number[]];
/** Count key [tenantId, projectId, granularity, bucketStartMs] → [count, errors]: totals without dimensions, for fast page totals. */
export type CountValue = [number, number];

type Entry<K> = { key: K; value: RollupValue };
/** Count key: [tenantId, projectId, granularity, bucketStartMs]. */
export type CountKey = [string, string, Granularity, number];
type Derived = { rollups: Entry<RollupKey>[]; counts: { key: CountKey; value: CountValue }[] };

/** Rollup and count rows to merge into the stored ones. */
export interface RollupChanges {
  readonly rollups: readonly { key: RollupKey; value: RollupValue }[];
  readonly counts: readonly { key: CountKey; value: CountValue }[];
}

/**
 * Pending rollup changes of one write batch. Events are added to their minute only; the hours
 * and the dimensionless counts are summed from the minutes when read, so an event costs one
 * map lookup.
 */
export class RollupDelta implements RollupChanges {
  // Minute entries by project and minute, then by dimensions: consecutive events nearly always
  // share a project and a minute, so an event costs one string and one lookup.
  readonly #buckets = new Map<string, Map<number, Map<string, Entry<RollupKey>>>>();
  readonly #minutes: Entry<RollupKey>[] = [];
  #last: { tenantId: string; projectId: string; start: number; groups: Map<string, Entry<RollupKey>> } | undefined;
  #derived: Derived | undefined;

  /** Adds one stored event to the minute (and so the hour) it belongs to. */
  addEvent(tenantId: string, projectId: string, timeMs: number, v: StoredEvent): void {
    const size = GRANULARITY_MS.m;
    const start = timeMs - (((timeMs % size) + size) % size);
    let last = this.#last;
    if (!last || last.start !== start || last.projectId !== projectId || last.tenantId !== tenantId) last = this.#last = { tenantId, projectId, start, groups: this.#groupsOf(tenantId, projectId, start) };
    const md = v[F.metadata];
    const llm = v[F.category] === 'llm';
    const provider = llm ? metaString(md, 'provider') : '';
    const model = llm ? metaString(md, 'model') : '';
    const agent = v[F.agent] ?? '';
    const channel = v[F.channel] ?? '';
    const id = `${v[F.category]}\u0000${v[F.eventType]}\u0000${agent}\u0000${channel}\u0000${provider}\u0000${model}`;
    let r = last.groups.get(id);
    if (!r) {
      r = { key: [tenantId, projectId, 'm', start, v[F.category], v[F.eventType], agent, channel, provider, model], value: [0, 0, 0, 0, 0, 0, []] };
      last.groups.set(id, r);
      this.#minutes.push(r);
    }
    const value = r.value;
    value[0] += 1;
    if (v[F.error] !== null) value[1] += 1;
    const duration = v[F.duration];
    if (duration !== null) {
      value[2] += 1;
      value[3] += duration;
      addToSparse(value[6], duration);
    }
    value[4] += tokensOf(md);
    value[5] += costOf(md);
    this.#derived = undefined;
  }

  /** The rollup rows to merge: every minute touched and the hours they fall in. */
  get rollups(): readonly Entry<RollupKey>[] {
    return this.#derive().rollups;
  }

  /** The [count, errors] rows to merge, per project, granularity and bucket. */
  get counts(): readonly { key: CountKey; value: CountValue }[] {
    return this.#derive().counts;
  }

  #groupsOf(tenantId: string, projectId: string, start: number): Map<string, Entry<RollupKey>> {
    const pid = `${tenantId}\u0000${projectId}`;
    let minutes = this.#buckets.get(pid);
    if (!minutes) this.#buckets.set(pid, (minutes = new Map()));
    let groups = minutes.get(start);
    if (!groups) minutes.set(start, (groups = new Map()));
    return groups;
  }

  #derive(): Derived {
    if (this.#derived) return this.#derived;
    const hours = new Map<string, Entry<RollupKey>>();
    const counts = new Map<string, { key: CountKey; value: CountValue }>();
    const H = GRANULARITY_MS.h;
    for (const { key, value } of this.#minutes) {
      const hour = key[3] - (((key[3] % H) + H) % H);
      const hid = `${hour}\u0000${key[0]}\u0000${key[1]}\u0000${key.slice(4).join('\u0000')}`;
      const h = hours.get(hid);
      if (h) mergeRollup(h.value, value);
      else hours.set(hid, { key: [key[0], key[1], 'h', hour, key[4], key[5], key[6], key[7], key[8], key[9]], value: [...value.slice(0, 6), [...value[6]]] as RollupValue });
      for (const [g, start] of [['m', key[3]], ['h', hour]] as const) {
        const cid = `${g}${start}\u0000${key[0]}\u0000${key[1]}`;
        const c = counts.get(cid);
        if (c) {
          c.value[0] += value[0];
          c.value[1] += value[1];
        } else counts.set(cid, { key: [key[0], key[1], g, start], value: [value[0], value[1]] });
      }
    }
    this.#derived = { rollups: [...this.#minutes, ...hours.values()], counts: [...counts.values()] };
    return this.#derived;
  }
}

/** `into` plus (sign 1) or minus (sign -1) `add`, field by field, histograms included; returns `into`. */
export function mergeRollup(into: RollupValue, add: RollupValue, sign: 1 | -1 = 1): RollupValue {
  for (let i = 0; i < 6; i++) into[i] = (into[i] as number) + sign * (add[i] as number);
  into[6] = mergeSparse(into[6], add[6], sign);
  return into;
}

function mergeSparse(a: readonly number[], b: readonly number[], sign: 1 | -1): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! < b[j]!)) {
      out.push(a[i]!, a[i + 1]!);
      i += 2;
    } else if (i >= a.length || b[j]! < a[i]!) {
      out.push(b[j]!, sign * b[j + 1]!);
      j += 2;
    } else {
      const n = a[i + 1]! + sign * b[j + 1]!;
      if (n !== 0) out.push(a[i]!, n);
      i += 2;
      j += 2;
    }
  }
  return out;
}
