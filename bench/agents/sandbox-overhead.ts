import { Bench } from 'tinybench';
import { CodeSandbox } from '../../actors/tools/index.js';
import type { CodeToolSpec } from '../../actors/language/index.js';

/** Latency percentiles (ms) of one measured call. */
export interface CallLatency {
  samples: number;
  p50: number;
  p95: number;
  p99: number;
}

/** The sandbox's per-call cost next to calling the same function directly, measured in one run. */
export interface SandboxOverhead {
  direct: CallLatency;
  sandbox: CallLatency;
  /** sandbox / direct, per percentile. */
  ratio: { p50: number; p95: number };
}

const SOURCE = 'export default async ({ quantity, unit }) => ({ total: quantity * unit })';
// The very function the tool's module exports, called in this realm.
const direct = async ({ quantity, unit }: { quantity: number; unit: number }): Promise<{ total: number }> => ({ total: quantity * unit });

/**
 * Runs a trivial CODE tool through CodeSandbox (fresh vm context on a piscina worker per call,
 * as the tools executor does, without ctx.memory) and the same function directly, with tinybench.
 */
export async function measureSandboxOverhead(timeMs: number): Promise<SandboxOverhead> {
  const sandbox = new CodeSandbox();
  const spec: CodeToolSpec = { kind: 'code', name: 'price', params: { quantity: 'number', unit: 'number' }, source: SOURCE, timeoutMs: 5000, memoryMb: 64 };
  const params = { quantity: 3, unit: 4.5 };
  try {
    // Fail loudly rather than time a call that errors.
    const probe = await sandbox.run(spec, params, undefined);
    if (!probe.ok || (probe.result as { total?: number }).total !== 13.5) throw new Error(`sandbox probe failed: ${JSON.stringify(probe)}`);
    const bench = new Bench({ time: timeMs, warmupTime: Math.min(500, timeMs / 2) });
    let sink = 0;
    bench
      .add('direct', async () => {
        sink += (await direct(params)).total;
      })
      .add('sandbox', async () => {
        const r = await sandbox.run(spec, params, undefined);
        if (!r.ok) throw new Error(r.error);
      });
    await bench.run();
    if (sink === 0) throw new Error('the direct call never ran');
    const stats = (name: string): CallLatency => {
      const task = bench.getTask(name);
      const latency = task?.result?.latency;
      if (!latency || task?.result?.error) throw new Error(`${name}: ${String(task?.result?.error ?? 'no result')}`);
      const sorted = [...latency.samples].sort((a, b) => a - b);
      const pct = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
      return { samples: sorted.length, p50: pct(50), p95: pct(95), p99: pct(99) };
    };
    const d = stats('direct');
    const s = stats('sandbox');
    const shown = (c: CallLatency): CallLatency => ({ samples: c.samples, p50: round(c.p50), p95: round(c.p95), p99: round(c.p99) });
    return { direct: shown(d), sandbox: shown(s), ratio: { p50: Math.round(s.p50 / d.p50), p95: Math.round(s.p95 / d.p95) } };
  } finally {
    await sandbox.close();
  }
}

function round(n: number): number {
  return Math.round(n * 100_000) / 100_000;
}
