import type { Actor, ActorKind, ActorRef, MessageContext } from './actor.js';
import type { ErrorValue } from './errors.js';

/** Where a host sends the outcome of asks: a MessagePort in a worker, the pending table in-process. */
export interface ReplySink {
  reply(id: number, value: unknown): void;
  fail(id: number, error: ErrorValue): void;
  chunk(id: number, chunk: unknown): void;
}

/**
 * One queued message. It is also the handler's MessageContext, so a message costs one object;
 * `done` turns `emit` into a no-op once the reply left, so a stray late emit cannot reach the
 * next asker.
 */
export class Envelope implements MessageContext {
  /** Next envelope in the mailbox (an intrusive list: no array to grow). */
  next: Envelope | null = null;
  done = false;

  constructor(
    readonly self: ActorRef,
    readonly message: unknown,
    readonly requestId: string | undefined,
    /** Ask id in the asker's namespace; 0 for a tell. */
    readonly id: number,
    readonly stream: boolean,
    readonly sink: ReplySink,
  ) {}

  emit(chunk: unknown): void {
    if (this.stream && !this.done) this.sink.chunk(this.id, chunk);
  }
}

/**
 * The serial queue of one actor plus its live instance. `running` is true while a message is
 * handled, the actor is being created, or it is being passivated: all three must not overlap
 * with handling, so they share the one flag and the one queue.
 */
export class Mailbox {
  actor: Actor | null = null;
  running = false;
  /** Messages waiting (not counting the one being handled). */
  size = 0;
  /** Time the mailbox last became empty; drives passivation. */
  lastActive = Date.now();
  /** Set by a shard release: passivate and drop once the queue drains. */
  onReleased: (() => void) | null = null;
  #head: Envelope | null = null;
  #tail: Envelope | null = null;

  constructor(
    readonly self: ActorRef,
    readonly shard: number,
    /** The kind that creates this actor, resolved once rather than per message. */
    readonly factory: ActorKind,
  ) {}

  /** Appends in arrival order. */
  push(envelope: Envelope): void {
    if (this.#tail === null) this.#head = envelope;
    else this.#tail.next = envelope;
    this.#tail = envelope;
    this.size++;
  }

  /** Takes the oldest envelope, or null when empty. */
  shift(): Envelope | null {
    const envelope = this.#head;
    if (envelope === null) return null;
    this.#head = envelope.next;
    if (this.#head === null) this.#tail = null;
    envelope.next = null;
    this.size--;
    return envelope;
  }

  /** True when nothing waits. */
  get empty(): boolean {
    return this.#head === null;
  }
}
