import { fromErrorValue, ParleyError, type ErrorValue } from './errors.js';
import type { Logger } from './log.js';

/** One ask waiting for its reply. */
export class PendingAsk {
  /** Worker the ask was posted to (main thread only); -1 while it waits in a buffer. */
  worker = -1;
  settled = false;
  timer: NodeJS.Timeout | undefined = undefined;

  constructor(
    readonly id: number,
    readonly resolve: (value: unknown) => void,
    readonly reject: (error: ParleyError) => void,
    readonly onChunk: ((chunk: unknown) => void) | undefined,
  ) {}
}

function expire(table: PendingAsks, entry: PendingAsk, timeoutMs: number): void {
  table.fail(entry.id, { code: 'SERVICE_UNAVAILABLE', message: 'The actor did not reply in time', details: { timeoutMs } });
}

/**
 * The asks a thread is waiting on, by id. Every way an ask can end (reply, failure, timeout, a
 * dead worker, close) goes through here, so each settles exactly once and a late reply finds
 * nothing and is counted as dropped.
 */
export class PendingAsks {
  readonly #entries = new Map<number, PendingAsk>();
  readonly #log: Logger;
  readonly #onSettled: ((entry: PendingAsk) => void) | undefined;
  #nextId = 0;
  #dropped = 0;

  /** `onSettled` runs after any entry settles (the main thread uses it to count in-flight asks). */
  constructor(log: Logger, onSettled?: (entry: PendingAsk) => void) {
    this.#log = log;
    this.#onSettled = onSettled;
  }

  /** Asks waiting now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Replies and chunks that arrived after their ask had already ended (timed out, failed). */
  get dropped(): number {
    return this.#dropped;
  }

  /** Registers an ask with a deadline; the caller sends it with `entry.id`. */
  open(timeoutMs: number, resolve: (value: unknown) => void, reject: (error: ParleyError) => void, onChunk: ((chunk: unknown) => void) | undefined): PendingAsk {
    const id = ++this.#nextId;
    const entry = new PendingAsk(id, resolve, reject, onChunk);
    entry.timer = setTimeout(expire, timeoutMs, this, entry, timeoutMs);
    this.#entries.set(id, entry);
    return entry;
  }

  /** Settles ask `id` with a value. */
  reply(id: number, value: unknown): void {
    const entry = this.#take(id);
    if (entry === undefined) return;
    entry.resolve(value);
    this.#onSettled?.(entry);
  }

  /** Settles ask `id` with an error (always rebuilt as a ParleyError). */
  fail(id: number, error: ErrorValue): void {
    const entry = this.#take(id);
    if (entry === undefined) return;
    entry.reject(fromErrorValue(error));
    this.#onSettled?.(entry);
  }

  /** Hands a streamed chunk to the asker. */
  chunk(id: number, chunk: unknown): void {
    const entry = this.#entries.get(id);
    if (entry === undefined) {
      this.#dropped++;
      return;
    }
    if (entry.onChunk === undefined) return;
    try {
      entry.onChunk(chunk);
    } catch (err) {
      this.#log.error('onChunk listener threw', { err });
    }
  }

  /** Fails every waiting ask that `match`es (e.g. those posted to a worker that died). */
  failWhere(match: (entry: PendingAsk) => boolean, error: ErrorValue): number {
    let n = 0;
    for (const entry of [...this.#entries.values()]) {
      if (match(entry)) {
        this.fail(entry.id, error);
        n++;
      }
    }
    return n;
  }

  #take(id: number): PendingAsk | undefined {
    const entry = this.#entries.get(id);
    if (entry === undefined) {
      this.#dropped++;
      return undefined;
    }
    this.#entries.delete(id);
    clearTimeout(entry.timer);
    entry.settled = true;
    return entry;
  }
}
