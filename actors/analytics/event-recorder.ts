/**
 * The EventSink producers write to: an in-memory bounded queue of events flushed to the
 * EventStore (or the writer thread) every 100 ms or every 5,000 events. The EventStore writes
 * each flush in one transaction; the writer thread gathers a second of flushes into one (rollups
 * are merged once per transaction, not per event, which is what makes recording cheap). record()
 * never blocks and never throws; when the queue is full the event is dropped and counted
 * (analytics are shed before chats slow down). One recorder per thread: LMDB serializes the
 * writers.
 */
import type { EventSink, NewAnalyticsEvent } from './analytics-event.js';

/** Where a recorder writes (EventStore, ThreadedEventWriter): assigns ids, resolves once committed. */
export interface EventWriter {
  writeNew(events: readonly NewAnalyticsEvent[]): Promise<void>;
  /** Asks a writer that gathers batches (ThreadedEventWriter) to commit what it holds now. */
  commitNow?(): void;
}

/** Tuning of a recorder. */
export interface EventRecorderOptions {
  /** Events waiting beyond this are dropped; default 100,000. */
  maxQueue?: number;
  /** A flush starts as soon as this many wait; default 5,000. */
  batchSize?: number;
  /** Otherwise waiting events are flushed after this many ms; default 100. */
  flushMs?: number;
  /** Most events in one flush; default 10,000. */
  maxPerFlush?: number;
  /** Flushes that may wait for their commit at once (a writer thread holds about a second of them); default 16. */
  maxInFlight?: number;
}

/** Counters of a recorder. */
export interface RecorderStats {
  /** Events committed to the store. */
  recorded: number;
  /** Events shed: queue full, invalid, or lost to a failed write. */
  dropped: number;
  /** Transactions written. */
  flushes: number;
  /** Events waiting now. */
  queued: number;
  /** Events handed to the writer and not committed yet. */
  writing: number;
}

/** Batched, asynchronous EventSink over an EventWriter. */
export class EventRecorder implements EventSink {
  readonly #writer: EventWriter;
  readonly #maxQueue: number;
  readonly #batchSize: number;
  readonly #flushMs: number;
  readonly #maxPerFlush: number;
  #queue: NewAnalyticsEvent[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #maxInFlight: number;
  readonly #inFlight = new Set<Promise<void>>();
  #closed = false;
  #recorded = 0;
  #dropped = 0;
  #flushes = 0;
  #writing = 0;

  constructor(writer: EventWriter, options: EventRecorderOptions = {}) {
    this.#writer = writer;
    this.#maxQueue = options.maxQueue ?? 100_000;
    this.#batchSize = options.batchSize ?? 5000;
    this.#flushMs = options.flushMs ?? 100;
    this.#maxPerFlush = options.maxPerFlush ?? 10_000;
    this.#maxInFlight = options.maxInFlight ?? 16;
  }

  /**
   * Queues an event as it is (the writer assigns its id and encodes it, off this thread when it
   * is a ThreadedEventWriter); never throws, never waits. The event must not change afterwards.
   */
  record(event: NewAnalyticsEvent): void {
    try {
      if (this.#closed || this.#queue.length >= this.#maxQueue) {
        this.#dropped++;
        return;
      }
      if (!Number.isFinite(Date.parse(event.timestamp))) {
        this.#dropped++;
        return;
      }
      this.#queue.push(event);
      if (this.#queue.length >= this.#batchSize) this.#schedule(0);
      else this.#schedule(this.#flushMs);
    } catch {
      this.#dropped++;
    }
  }

  /** Current counters. */
  stats(): RecorderStats {
    return { recorded: this.#recorded, dropped: this.#dropped, flushes: this.#flushes, queued: this.#queue.length, writing: this.#writing };
  }

  /** Writes everything queued now; resolves when it is committed. */
  async flush(): Promise<void> {
    while (this.#queue.length > 0 || this.#inFlight.size > 0) {
      if (this.#queue.length > 0 && this.#inFlight.size < this.#maxInFlight) this.#start();
      else {
        this.#writer.commitNow?.();
        await Promise.race(this.#inFlight);
      }
    }
  }

  /** Stops accepting events and flushes the rest; safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(delayMs: number): void {
    if (this.#inFlight.size >= this.#maxInFlight) return; // a finishing flush reschedules
    if (this.#timer) {
      if (delayMs > 0) return;
      clearTimeout(this.#timer);
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#start();
    }, delayMs);
    this.#timer.unref();
  }

  #start(): void {
    const flushing: Promise<void> = this.#flushOnce().finally(() => {
      this.#inFlight.delete(flushing);
      if (this.#queue.length > 0) this.#schedule(this.#queue.length >= this.#batchSize ? 0 : this.#flushMs);
    });
    this.#inFlight.add(flushing);
  }

  async #flushOnce(): Promise<void> {
    const batch = this.#queue.length <= this.#maxPerFlush ? this.#queue : this.#queue.slice(0, this.#maxPerFlush);
    this.#queue = batch === this.#queue ? [] : this.#queue.slice(this.#maxPerFlush);
    if (batch.length === 0) return;
    this.#writing += batch.length;
    try {
      await this.#writer.writeNew(batch);
      this.#recorded += batch.length;
    } catch {
      this.#dropped += batch.length;
    }
    this.#writing -= batch.length;
    this.#flushes++;
  }
}
