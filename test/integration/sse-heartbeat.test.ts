import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamSink } from '../../gateway/http.js';
import { SSE_HEADERS, SseWriter, sseResult } from '../../gateway/sse.js';

/** A sink that records what is written; `disconnect()` plays a client going away. */
class FakeSink implements StreamSink {
  readonly chunks: string[] = [];
  ended = 0;
  #closed = false;
  readonly #listeners: (() => void)[] = [];
  write(chunk: string): boolean {
    if (this.#closed) return false;
    this.chunks.push(chunk);
    return true;
  }
  end(): void {
    this.ended++;
    this.#closed = true;
  }
  onClose(listener: () => void): void {
    this.#listeners.push(listener);
  }
  get closed(): boolean {
    return this.#closed;
  }
  disconnect(): void {
    this.#closed = true;
    for (const l of this.#listeners.splice(0)) l();
  }
  heartbeats(): number {
    return this.chunks.filter((c) => c === ': heartbeat\n\n').length;
  }
}

describe('SseWriter heartbeat (gateway/sse.ts, fake clock)', () => {
  beforeEach(() => {
    mock.timers.enable({ apis: ['setInterval'] });
  });
  afterEach(() => {
    mock.timers.reset();
  });

  test('a `: heartbeat` comment is written every interval (20 ms), not before', () => {
    const sink = new FakeSink();
    const sse = new SseWriter(sink, 20);
    mock.timers.tick(19);
    assert.equal(sink.heartbeats(), 0);
    mock.timers.tick(1);
    assert.deepEqual(sink.chunks, [': heartbeat\n\n']);
    mock.timers.tick(40);
    assert.equal(sink.heartbeats(), 3);
    sse.end();
  });

  test('the interval is the configured one (a 15 s writer is silent at 14.999 s)', () => {
    const sink = new FakeSink();
    const sse = new SseWriter(sink, 15_000);
    mock.timers.tick(14_999);
    assert.equal(sink.heartbeats(), 0);
    mock.timers.tick(1);
    assert.equal(sink.heartbeats(), 1);
    sse.end();
  });

  test('heartbeats interleave with named events in the SSE wire format', () => {
    const sink = new FakeSink();
    const sse = new SseWriter(sink, 20);
    sse.event('session', { sessionId: 'c1' });
    mock.timers.tick(20);
    sse.event('text_delta', { delta: 'Hi' });
    assert.deepEqual(sink.chunks, ['event: session\ndata: {"sessionId":"c1"}\n\n', ': heartbeat\n\n', 'event: text_delta\ndata: {"delta":"Hi"}\n\n']);
    sse.end();
  });

  test('end() stops the heartbeat and ends the sink', () => {
    const sink = new FakeSink();
    const sse = new SseWriter(sink, 20);
    mock.timers.tick(20);
    sse.end();
    assert.equal(sink.ended, 1);
    assert.equal(sse.closed, true);
    const written = sink.chunks.length;
    mock.timers.tick(1000);
    assert.equal(sink.chunks.length, written);
  });

  test('a client that goes away stops the heartbeat', () => {
    const sink = new FakeSink();
    const sse = new SseWriter(sink, 20);
    mock.timers.tick(40);
    assert.equal(sink.heartbeats(), 2);
    sink.disconnect();
    assert.equal(sse.closed, true);
    const before = sink.chunks.length;
    mock.timers.tick(1000);
    assert.equal(sink.chunks.length, before);
  });

  test('sseResult: a 200 text/event-stream result whose writer uses the given interval', () => {
    let writer: SseWriter | undefined;
    const result = sseResult(20, (sse) => {
      writer = sse;
      sse.event('session', { sessionId: 'c2' });
    });
    assert.equal(result.kind, 'stream');
    assert.equal(result.status, 200);
    assert.match(result.headers['content-type']!, /^text\/event-stream/);
    assert.equal(result.headers['cache-control'], SSE_HEADERS['cache-control']);
    const sink = new FakeSink();
    result.start(sink);
    assert.ok(writer);
    mock.timers.tick(20);
    assert.deepEqual(sink.chunks, ['event: session\ndata: {"sessionId":"c2"}\n\n', ': heartbeat\n\n']);
    writer.end();
  });
});
