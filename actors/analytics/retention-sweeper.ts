/** Runs EventStore.sweep on an unref'd timer, off the request path. */
import type { EventStore } from './event-store.js';

/** Sweeps expired analytics every `intervalMs` (default one hour, first run after a minute). */
export class RetentionSweeper {
  readonly #events: EventStore;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running = false;

  constructor(events: EventStore, intervalMs = 3_600_000) {
    this.#events = events;
    this.#intervalMs = intervalMs;
  }

  /** Starts the timer; the first sweep runs after `firstDelayMs`. */
  start(firstDelayMs = 60_000): void {
    if (this.#timer) return;
    const tick = (): void => {
      this.#timer = setTimeout(() => void this.#run().finally(tick), this.#intervalMs);
      this.#timer.unref();
    };
    this.#timer = setTimeout(() => void this.#run().finally(tick), firstDelayMs);
    this.#timer.unref();
  }

  /** Stops the timer (a sweep under way finishes its current batch). */
  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #run(): Promise<void> {
    if (this.#running || !this.#timer) return;
    this.#running = true;
    try {
      await this.#events.sweep();
    } catch {
      // A failed sweep (store closing) is retried on the next tick.
    } finally {
      this.#running = false;
    }
  }
}
