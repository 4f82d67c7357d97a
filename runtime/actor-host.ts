import { randomUUID } from 'node:crypto';
import type { Actor, ActorEnv, ActorKind } from './actor.js';
import { isErrorValue, ParleyError, type ErrorValue } from './errors.js';
import type { Logger } from './log.js';
import { Envelope, Mailbox, type ReplySink } from './mailbox.js';

/** Options of an ActorHost (validated by the ActorSystem that builds it). */
export interface ActorHostOptions {
  /** The kinds this thread can create, from the ActorKindsModule. */
  kinds: Record<string, ActorKind>;
  /** Services handed to every actor created here. */
  env: ActorEnv;
  /** Receives replies, failures and chunks of asks. */
  sink: ReplySink;
  /** Messages an actor may have waiting before new ones get QUEUE_FULL. */
  mailboxLimit: number;
  /** An actor idle this long is passivated. */
  idleMs: number;
  log: Logger;
  /** retryAfterMs suggested with QUEUE_FULL (default 1000). */
  queueFullRetryMs?: number;
}

const INTERNAL_MESSAGE = 'Unexpected internal error';

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

/**
 * Hosts the actors of one thread: creates them on first message, runs each one's messages one at
 * a time in arrival order (different actors interleave on the event loop), refuses messages over
 * the mailbox limit, supervises handlers and passivates idle actors.
 */
export class ActorHost {
  readonly #kinds = new Map<string, ActorKind>();
  readonly #boxes = new Map<string, Map<string, Mailbox>>();
  readonly #env: ActorEnv;
  readonly #sink: ReplySink;
  readonly #log: Logger;
  readonly #limit: number;
  readonly #idleMs: number;
  readonly #queueFull: ErrorValue;
  readonly #sweepTimer: NodeJS.Timeout;
  #closed = false;

  constructor(options: ActorHostOptions) {
    for (const [name, kind] of Object.entries(options.kinds)) {
      if (typeof kind?.create !== 'function') throw new TypeError(`kinds.${name} must have a create(key, env) function`);
      this.#kinds.set(name, kind);
    }
    this.#env = options.env;
    this.#sink = options.sink;
    this.#log = options.log;
    this.#limit = options.mailboxLimit;
    this.#idleMs = options.idleMs;
    this.#queueFull = { code: 'QUEUE_FULL', message: 'Actor mailbox is full', details: { retryAfterMs: options.queueFullRetryMs ?? 1000 } };
    // Half the idle time bounds how long past its deadline an actor stays; unref'd so an idle
    // host never keeps the process alive.
    this.#sweepTimer = setInterval(() => this.#sweep(), Math.max(5, Math.min(options.idleMs / 2, 30_000)));
    this.#sweepTimer.unref();
  }

  /** Live actors (created and not yet passivated), for stats and tests. */
  get actorCount(): number {
    let n = 0;
    for (const byKey of this.#boxes.values()) for (const box of byKey.values()) if (box.actor !== null) n++;
    return n;
  }

  /** Queues an ask (id > 0) or a tell (id 0) for actor kind/key of `shard`. */
  deliver(kind: string, key: string, shard: number, message: unknown, requestId: string | undefined, id: number, stream: boolean): void {
    if (this.#closed) {
      if (id !== 0) this.#sink.fail(id, { code: 'SERVICE_UNAVAILABLE', message: 'Actor host is closing' });
      return;
    }
    let byKey = this.#boxes.get(kind);
    if (byKey === undefined) {
      if (!this.#kinds.has(kind)) {
        this.#fail(id, requestId, `unknown actor kind`, { kind, key });
        return;
      }
      byKey = new Map();
      this.#boxes.set(kind, byKey);
    }
    let box = byKey.get(key);
    if (box === undefined) {
      box = new Mailbox({ kind, key }, shard, this.#kinds.get(kind)!);
      byKey.set(key, box);
    } else if (box.size >= this.#limit) {
      if (id !== 0) this.#sink.fail(id, this.#queueFull);
      else this.#log.warn('mailbox full, tell dropped', { kind, key });
      return;
    }
    box.push(new Envelope(box.self, message, requestId, id, stream, this.#sink));
    if (!box.running) void this.#drain(box);
  }

  /**
   * Lets the actors of `shards` finish what is in their mailboxes, passivates them and drops
   * them; resolves when all are gone. The caller stops sending to those shards first.
   */
  release(shards: readonly number[]): Promise<void> {
    const set = new Set(shards);
    const waits: Promise<void>[] = [];
    for (const byKey of this.#boxes.values()) {
      for (const box of byKey.values()) {
        if (set.has(box.shard)) waits.push(this.#releaseBox(box));
      }
    }
    return Promise.all(waits).then(() => undefined);
  }

  /** Refuses new messages, drains and passivates every actor; safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweepTimer);
    const waits: Promise<void>[] = [];
    for (const byKey of this.#boxes.values()) for (const box of byKey.values()) waits.push(this.#releaseBox(box));
    await Promise.all(waits);
  }

  #releaseBox(box: Mailbox): Promise<void> {
    return new Promise<void>((resolve) => {
      const previous = box.onReleased;
      box.onReleased = previous === null ? resolve : () => (previous(), resolve());
      if (!box.running) void this.#retire(box);
    });
  }

  async #drain(box: Mailbox): Promise<void> {
    box.running = true;
    let envelope: Envelope | null;
    while ((envelope = box.shift()) !== null) {
      let result: unknown;
      try {
        let actor: Actor | null = box.actor;
        if (actor === null) {
          // Created inside the serial loop, so messages that arrive meanwhile queue behind.
          const created = box.factory.create(box.self.key, this.#env);
          actor = isThenable(created) ? await created : created;
          box.actor = actor;
        }
        result = actor.receive(envelope.message, envelope);
        if (isThenable(result)) result = await result;
      } catch (err) {
        envelope.done = true;
        this.#handlerFailed(box, envelope, err);
        continue;
      }
      envelope.done = true;
      if (envelope.id !== 0) this.#replySafely(box, envelope, result);
    }
    box.lastActive = Date.now();
    if (box.onReleased !== null) await this.#retire(box);
    else box.running = false;
  }

  #replySafely(box: Mailbox, envelope: Envelope, value: unknown): void {
    try {
      this.#sink.reply(envelope.id, value);
    } catch (err) {
      // The reply could not be encoded (a function, a cycle...): the actor itself is fine.
      this.#fail(envelope.id, envelope.requestId, 'actor reply could not be sent', { kind: box.self.kind, key: box.self.key, err });
    }
  }

  #handlerFailed(box: Mailbox, envelope: Envelope, err: unknown): void {
    if (err instanceof ParleyError || isErrorValue(err)) {
      // Thrown on purpose (NOT_FOUND, VALIDATION_ERROR...): a reply, not a failure; keep the actor.
      if (envelope.id !== 0) this.#sink.fail(envelope.id, err instanceof ParleyError ? err.toValue() : (err as ErrorValue));
      return;
    }
    // Its in-memory state may be half-updated: drop it so the next message rebuilds it from the store.
    box.actor = null;
    this.#fail(envelope.id, envelope.requestId, 'actor handler failed', { kind: box.self.kind, key: box.self.key, err });
  }

  // The exception text may hold secrets: it goes to the log only, tied to the reply by request id.
  #fail(id: number, requestId: string | undefined, what: string, fields: Record<string, unknown>): void {
    const rid = requestId ?? randomUUID();
    this.#log.error(what, { ...fields, requestId: rid });
    if (id !== 0) this.#sink.fail(id, { code: 'INTERNAL_ERROR', message: INTERNAL_MESSAGE, details: { requestId: rid } });
  }

  async #retire(box: Mailbox): Promise<void> {
    box.running = true;
    const actor = box.actor;
    box.actor = null;
    if (actor !== null && actor.passivate !== undefined) {
      try {
        await actor.passivate();
      } catch (err) {
        this.#log.error('actor passivate failed', { kind: box.self.kind, key: box.self.key, err });
      }
    }
    const released = box.onReleased;
    box.onReleased = null;
    if (box.empty) {
      const byKey = this.#boxes.get(box.self.kind);
      if (byKey?.get(box.self.key) === box) byKey.delete(box.self.key);
      box.running = false;
    } else {
      // Messages arrived while passivating: serve them with a fresh instance.
      void this.#drain(box);
    }
    released?.();
  }

  #sweep(): void {
    const cutoff = Date.now() - this.#idleMs;
    for (const byKey of this.#boxes.values()) {
      for (const box of byKey.values()) {
        if (!box.running && box.empty && box.lastActive <= cutoff) void this.#retire(box);
      }
    }
  }
}
