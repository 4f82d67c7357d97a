/**
 * Mergeable duration histogram with fixed buckets: exact 1 ms buckets below 64 ms, then
 * logarithmic buckets 2% wide. A percentile read from it is within 1% of the true value (the
 * bucket's geometric middle is reported), which is what docs/analytics.md promises for p95.
 */

const LINEAR = 64;
const GROWTH = 1.02;
const LOG_GROWTH = Math.log(GROWTH);
/** Buckets cover 0 ms to about 30 days; longer durations land in the last one. */
export const HISTOGRAM_BUCKETS = LINEAR + Math.ceil(Math.log((30 * 86_400_000) / LINEAR) / LOG_GROWTH) + 1;

/** The bucket of a duration in ms (negative counts as 0). */
export function bucketOf(durationMs: number): number {
  if (!(durationMs > 0)) return 0;
  if (durationMs < LINEAR) return Math.floor(durationMs);
  return Math.min(HISTOGRAM_BUCKETS - 1, LINEAR + Math.floor(Math.log(durationMs / LINEAR) / LOG_GROWTH));
}

/** The value reported for a bucket: its integer below 64 ms, its geometric middle above. */
export function bucketValue(bucket: number): number {
  if (bucket < LINEAR) return bucket;
  const low = LINEAR * GROWTH ** (bucket - LINEAR);
  return low * Math.sqrt(GROWTH);
}

/** Adds a sparse histogram ([bucket, count, bucket, count, ...]) into a dense one. */
export function addSparse(dense: Float64Array, sparse: readonly number[]): void {
  for (let i = 0; i + 1 < sparse.length; i += 2) dense[sparse[i]!]! += sparse[i + 1]!;
}

/** The nearest-rank percentile (0..1) of a dense histogram holding `total` values, or null when empty. */
export function percentile(dense: Float64Array, total: number, p: number): number | null {
  if (total <= 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (let b = 0; b < dense.length; b++) {
    seen += dense[b]!;
    if (seen >= rank) return bucketValue(b);
  }
  return bucketValue(dense.length - 1);
}

/** Merges one duration into a sparse histogram kept sorted by bucket (mutates and returns it). */
export function addToSparse(sparse: number[], durationMs: number): number[] {
  const bucket = bucketOf(durationMs);
  let lo = 0;
  let hi = sparse.length >> 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sparse[mid * 2]! < bucket) lo = mid + 1;
    else hi = mid;
  }
  if (lo * 2 < sparse.length && sparse[lo * 2] === bucket) sparse[lo * 2 + 1]! += 1;
  else sparse.splice(lo * 2, 0, bucket, 1);
  return sparse;
}
