/**
 * Per-hour and per-minute rollups, maintained in the same transaction as the events they sum.
 * A metrics query over a long range reads rollups for the whole hours and minutes inside it and
 * scans raw events only at its sub-minute edges (docs/analytics.md, "How queries are answered").
 */
import { addToSparse } from './duration-histogram.js';

/** Rollup granularities: 'h' hour, 'm' minute. */
export type Granularity = 'h' | 'm';
/** Length of each granularity in ms. */
export const GRANULARITY_MS: Readonly<Record<Granularity, number>> = { h: 3_600_000, m: 60_000 };
const GRANULARITIES: readonly Granularity[] = ['h', 'm'];

/** Rollup key: [tenantId, projectId, granularity, bucketStartMs, category, event_type, agent_name, channel, provider, model] ('' for null). */
export type RollupKey = [string, string, Granularity, number, string, string, string, string, string, string];
/** Rollup value: [count, errors, durationCount, durationSum, tokens, cost, sparse duration histogram]. */
export type RollupValue = [number, number, number, number, number, number, number[]];
/** Count key [tenantId, projectId, granularity, bucketStartMs] → [count, errors]: totals without dimensions, for fast page totals. */
export type CountValue = [number, number];

/** Pending rollup changes of one write batch. */
export class RollupDelta {
  readonly rollups = new Map<string, { key: RollupKey; value: RollupValue }>();
  readonly counts = new Map<string, { key: [string, string, Granularity, number]; value: CountValue }>();

  /** Adds one event to the hour and minute rollups it belongs to. */
  add(tenantId: string, projectId: string, timeMs: number, dims: readonly [string, string, string, string, string, string], isError: boolean, durationMs: number | null, tokens: number, cost: number): void {
    // One string per event names its group; the bucket is prepended per granularity.
    const project = `${tenantId}\u0000${projectId}`;
    const group = `${dims[0]}\u0000${dims[1]}\u0000${dims[2]}\u0000${dims[3]}\u0000${dims[4]}\u0000${dims[5]}`;
    for (const g of GRANULARITIES) {
      const size = GRANULARITY_MS[g];
      const start = timeMs - (((timeMs % size) + size) % size);
      const cid = `${g}${start}\u0000${project}`;
      const id = `${cid}\u0000${group}`;
      let r = this.rollups.get(id);
      if (!r) {
        r = { key: [tenantId, projectId, g, start, ...dims], value: [0, 0, 0, 0, 0, 0, []] };
        this.rollups.set(id, r);
      }
      const v = r.value;
      v[0] += 1;
      if (isError) v[1] += 1;
      if (durationMs !== null) {
        v[2] += 1;
        v[3] += durationMs;
        addToSparse(v[6], durationMs);
      }
      v[4] += tokens;
      v[5] += cost;
      let c = this.counts.get(cid);
      if (!c) {
        c = { key: [tenantId, projectId, g, start], value: [0, 0] };
        this.counts.set(cid, c);
      }
      c.value[0] += 1;
      if (isError) c.value[1] += 1;
    }
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
