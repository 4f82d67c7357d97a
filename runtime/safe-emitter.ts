import type { Logger } from './log.js';

/** Listener signatures by event name. */
export type EventMap<E> = { [K in keyof E]: (...args: never[]) => void };

/**
 * A typed event emitter whose listeners cannot crash it: each listener runs in its own try, a
 * throw is logged and the remaining listeners still run. (Node's EventEmitter would let the throw
 * escape into whatever supervisor code emitted the event.)
 */
export class SafeEmitter<E extends EventMap<E>> {
  readonly #listeners = new Map<keyof E, Set<E[keyof E]>>();
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Adds a listener. */
  on<K extends keyof E>(event: K, listener: E[K]): void {
    let set = this.#listeners.get(event);
    if (set === undefined) this.#listeners.set(event, (set = new Set()));
    set.add(listener);
  }

  /** Removes a listener added with `on`. */
  off<K extends keyof E>(event: K, listener: E[K]): void {
    this.#listeners.get(event)?.delete(listener);
  }

  /** Calls every listener of `event`; exceptions are logged, never thrown. */
  emit<K extends keyof E>(event: K, ...args: Parameters<E[K]>): void {
    const set = this.#listeners.get(event);
    if (set === undefined) return;
    for (const listener of [...set]) {
      try {
        (listener as (...a: Parameters<E[K]>) => void)(...args);
      } catch (err) {
        this.#log.error('event listener threw', { event: String(event), err });
      }
    }
  }
}
