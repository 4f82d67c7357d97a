/**
 * Single-pass grouping of events and rollups into metric buckets. Each group keeps plain
 * counters and, only when p95 is asked for, a dense duration histogram (duration-histogram.ts).
 */
import { addSparse, bucketOf, HISTOGRAM_BUCKETS, percentile } from './duration-histogram.js';

/** The groupBy dimensions of the API. */
export const DIMENSIONS = ['category', 'event_type', 'agent_name', 'channel', 'hour', 'day'] as const;
/** One API dimension. */
export type Dimension = (typeof DIMENSIONS)[number];
/** Dimensions used internally too (cost breakdown). */
export type AnyDimension = Dimension | 'provider' | 'model';

/** The metrics of the API. */
export const METRICS = ['count', 'avg_duration', 'error_rate', 'p95_duration', 'sum_tokens', 'sum_cost'] as const;
/** One metric. */
export type Metric = (typeof METRICS)[number];

/** One group of a metrics answer: the requested dimension fields and metric fields. */
export type MetricBucket = Record<string, string | number | null>;

/** The dimension values of one row (an event or a rollup), '' meaning null. */
export interface RowDims {
  category: string;
  event_type: string;
  agent_name: string;
  channel: string;
  provider: string;
  model: string;
}

/** Statistics of one row: a rollup (many events) or one event. */
export interface RowStats {
  count: number;
  errors: number;
  durCount: number;
  durSum: number;
  tokens: number;
  cost: number;
}

interface Group extends RowStats {
  values: (string | number)[];
  hist: Float64Array | undefined;
}

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** Accumulates rows into groups; read the answer with buckets(). */
export class Aggregator {
  readonly #groupBy: readonly AnyDimension[];
  readonly #metrics: readonly Metric[];
  readonly #wantHist: boolean;
  readonly #groups = new Map<string, Group>();

  constructor(groupBy: readonly AnyDimension[], metrics: readonly Metric[]) {
    this.#groupBy = groupBy;
    this.#metrics = metrics;
    this.#wantHist = metrics.includes('p95_duration');
  }

  /** Adds a rollup of events in the hour or minute starting at `timeMs`; `hist` is its sparse histogram. */
  addRollup(dims: RowDims, timeMs: number, stats: RowStats, hist: readonly number[]): void {
    const g = this.#group(dims, timeMs);
    g.count += stats.count;
    g.errors += stats.errors;
    g.durCount += stats.durCount;
    g.durSum += stats.durSum;
    g.tokens += stats.tokens;
    g.cost += stats.cost;
    if (g.hist) addSparse(g.hist, hist);
  }

  /** Adds one event. */
  addEvent(dims: RowDims, timeMs: number, isError: boolean, durationMs: number | null, tokens: number, cost: number): void {
    const g = this.#group(dims, timeMs);
    g.count += 1;
    if (isError) g.errors += 1;
    if (durationMs !== null) {
      g.durCount += 1;
      g.durSum += durationMs;
      if (g.hist) g.hist[bucketOf(durationMs)]! += 1;
    }
    g.tokens += tokens;
    g.cost += cost;
  }

  /** The groups as buckets, sorted by their dimension values in groupBy order. */
  buckets(): MetricBucket[] {
    const groups = [...this.#groups.values()].sort((a, b) => compareValues(a.values, b.values));
    return groups.map((g) => {
      const out: MetricBucket = {};
      this.#groupBy.forEach((d, i) => {
        const v = g.values[i]!;
        out[d] = d === 'hour' || d === 'day' ? new Date(v as number).toISOString() : v === '' ? null : v;
      });
      for (const m of this.#metrics) out[m] = metricValue(m, g);
      return out;
    });
  }

  #group(dims: RowDims, timeMs: number): Group {
    let key = '';
    const values: (string | number)[] = [];
    for (const d of this.#groupBy) {
      const v = d === 'hour' ? timeMs - (timeMs % HOUR) : d === 'day' ? timeMs - (timeMs % DAY) : dims[d];
      values.push(v);
      key += `${v}\u0000`;
    }
    let g = this.#groups.get(key);
    if (!g) {
      g = { values, count: 0, errors: 0, durCount: 0, durSum: 0, tokens: 0, cost: 0, hist: this.#wantHist ? new Float64Array(HISTOGRAM_BUCKETS) : undefined };
      this.#groups.set(key, g);
    }
    return g;
  }
}

function metricValue(m: Metric, g: Group): number | null {
  switch (m) {
    case 'count':
      return g.count;
    case 'avg_duration':
      return g.durCount === 0 ? null : round(g.durSum / g.durCount, 2);
    case 'error_rate':
      return g.count === 0 ? 0 : round(g.errors / g.count, 6);
    case 'p95_duration': {
      const p = g.hist ? percentile(g.hist, g.durCount, 0.95) : null;
      return p === null ? null : round(p, 2);
    }
    case 'sum_tokens':
      return g.tokens;
    case 'sum_cost':
      return round(g.cost, 8);
  }
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function compareValues(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}
