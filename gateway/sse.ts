import type { StreamResult, StreamSink } from './http.js';

/** Headers of a Server-Sent Events response. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** Writes named SSE events and `: heartbeat` comments to a sink. */
export class SseWriter {
  readonly #sink: StreamSink;
  readonly #timer: NodeJS.Timeout;

  constructor(sink: StreamSink, heartbeatMs: number) {
    this.#sink = sink;
    this.#timer = setInterval(() => this.#sink.write(': heartbeat\n\n'), heartbeatMs);
    sink.onClose(() => clearInterval(this.#timer));
  }

  /** True once the client is gone or the stream ended. */
  get closed(): boolean {
    return this.#sink.closed;
  }

  /** Sends `event: <name>` with JSON data. */
  event(name: string, data: unknown): void {
    this.#sink.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Stops the heartbeat and ends the response. */
  end(): void {
    clearInterval(this.#timer);
    this.#sink.end();
  }
}

/** A 200 SSE response whose body `run` produces. */
export function sseResult(heartbeatMs: number, run: (sse: SseWriter) => void): StreamResult {
  return { kind: 'stream', status: 200, headers: { ...SSE_HEADERS }, start: (sink) => run(new SseWriter(sink, heartbeatMs)) };
}
