import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** One request a load client sends; `next` may build the following body from the last response. */
export interface LoadRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** Latency percentiles (ms) and throughput of one load run. */
export interface LoadResult {
  requests: number;
  errors: number;
  durationMs: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Options of a load run. */
export interface LoadOptions {
  port: number;
  host?: string;
  connections: number;
  durationMs: number;
  /** Builds the request a client sends next; `state` is per client (e.g. its session id). */
  request(client: number, state: Record<string, unknown>): LoadRequest;
  /** Sees each response body (e.g. to keep the session id); non-2xx counts as an error. */
  onResponse?(client: number, state: Record<string, unknown>, status: number, body: string): void;
  /** Per-client state carried across runs (e.g. one session per client over several rounds). */
  states?: Record<string, unknown>[];
}

/** Merges runs of the same target into one result (percentiles over all their samples). */
export function mergeLoads(runs: { result: LoadResult; samples: number[] }[]): LoadResult {
  const samples = runs.flatMap((r) => r.samples).sort((a, b) => a - b);
  const durationMs = runs.reduce((t, r) => t + r.result.durationMs, 0);
  return summarize(samples, runs.reduce((t, r) => t + r.result.errors, 0), durationMs);
}

function summarize(sorted: number[], errors: number, durationMs: number): LoadResult {
  const pct = (p: number): number => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN);
  return {
    requests: sorted.length, errors, durationMs: Math.round(durationMs), rps: Math.round((sorted.length / durationMs) * 1000),
    p50: round(pct(50)), p95: round(pct(95)), p99: round(pct(99)), max: round(sorted[sorted.length - 1] ?? NaN),
  };
}

/**
 * A closed-loop HTTP/1.1 keep-alive load generator on raw sockets: each connection sends one
 * request, waits for the whole response, records its latency, sends the next. Lean on purpose:
 * on a 2-core machine the client shares the CPU with the server under test.
 */
export async function runLoad(options: LoadOptions): Promise<{ result: LoadResult; samples: number[] }> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + options.durationMs;
  const started = performance.now();
  await Promise.all(Array.from({ length: options.connections }, (_, i) => client(i)));
  const durationMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return { result: summarize(latencies, errors, durationMs), samples: latencies };

  async function client(index: number): Promise<void> {
    const state: Record<string, unknown> = options.states?.[index] ?? {};
    const socket = await open(options.port, options.host ?? '127.0.0.1');
    const reader = new ResponseReader(socket);
    try {
      while (performance.now() < deadline) {
        const r = options.request(index, state);
        const body = r.body ?? '';
        let head = `${r.method} ${r.path} HTTP/1.1\r\nhost: localhost\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
        for (const [k, v] of Object.entries(r.headers ?? {})) head += `${k}: ${v}\r\n`;
        const t0 = performance.now();
        socket.write(head + '\r\n' + body);
        const res = await reader.next();
        latencies.push(performance.now() - t0);
        if (res.status < 200 || res.status >= 300) errors++;
        options.onResponse?.(index, state, res.status, res.body);
      }
    } finally {
      socket.destroy();
    }
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function open(port: number, host: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host, noDelay: true }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Parses HTTP/1.1 responses with Content-Length bodies off a socket, one at a time. */
class ResponseReader {
  #buf: Buffer = Buffer.alloc(0);
  #waiter: (() => void) | undefined;
  #error: Error | undefined;

  constructor(socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.#buf = this.#buf.length ? Buffer.concat([this.#buf, d]) : d;
      this.#waiter?.();
    });
    const fail = (e?: Error): void => {
      this.#error = e ?? new Error('connection closed');
      this.#waiter?.();
    };
    socket.on('error', fail);
    socket.on('close', () => fail());
  }

  async next(): Promise<{ status: number; body: string }> {
    for (;;) {
      const end = this.#buf.indexOf('\r\n\r\n');
      if (end !== -1) {
        const head = this.#buf.subarray(0, end).toString('latin1');
        const status = Number(head.slice(9, 12));
        const m = /\r\ncontent-length: *(\d+)/i.exec(head);
        const length = m ? Number(m[1]) : 0;
        if (this.#buf.length >= end + 4 + length) {
          const body = this.#buf.subarray(end + 4, end + 4 + length).toString('utf8');
          this.#buf = this.#buf.subarray(end + 4 + length);
          return { status, body };
        }
      }
      if (this.#error) throw this.#error;
      await new Promise<void>((r) => (this.#waiter = r));
      this.#waiter = undefined;
    }
  }
}
