import type { Config } from './config.js';
import type { Logger } from './log.js';
import type { Store } from './store/store.js';

/** Address of an actor: its kind and its key. The key alone decides the shard. */
export interface ActorRef {
  kind: string;
  key: string;
}

/** Options of an ask. */
export interface AskOptions {
  /** Deadline in ms (default: Config.askTimeoutMs). On expiry the ask fails with SERVICE_UNAVAILABLE. */
  timeoutMs?: number;
  /** Carried to the actor and into its logs and error values. */
  requestId?: string;
  /** Receives each chunk the actor `emit`s before its reply (streaming). */
  onChunk?: (chunk: unknown) => void;
}

/** What an actor can do while handling one message. */
export interface MessageContext {
  /** This actor's address. */
  readonly self: ActorRef;
  /** Request id of the message being handled, when the sender gave one. */
  readonly requestId: string | undefined;
  /** Sends a chunk to the asker ahead of the reply (no-op for a tell or when nobody listens). */
  emit(chunk: unknown): void;
}

/** Services an actor gets when created; they live as long as the hosting thread. */
export interface ActorEnv {
  readonly store: Store;
  readonly log: Logger;
  readonly config: Config;
  /** Index of the hosting worker (-1 when actors run on the main thread). */
  readonly workerIndex: number;
  /** Ask another actor, wherever it lives; resolves with its reply or rejects with a ParleyError. */
  ask<T = unknown>(ref: ActorRef, message: unknown, options?: AskOptions): Promise<T>;
  /** Fire-and-forget message to another actor. */
  tell(ref: ActorRef, message: unknown): void;
}

/**
 * An actor handles one message at a time, in arrival order. Its state must be rebuilt from the
 * store in `ActorKind.create`, because the runtime may drop it at any time between messages
 * (passivation when idle, restart after a handler throws, re-homing when a worker dies).
 */
export interface Actor {
  /** Handles one message; the returned value (or thrown error) is the reply to an ask. */
  receive(message: unknown, ctx: MessageContext): unknown | Promise<unknown>;
  /** Called before the actor is dropped for idleness or re-homing; flush anything pending. */
  passivate?(): void | Promise<void>;
}

/** Creates actors of one kind. */
export interface ActorKind {
  create(key: string, env: ActorEnv): Actor | Promise<Actor>;
}

/**
 * The module that declares actor kinds (loaded by every worker, and by the main thread when
 * workers = 0). Its URL is given to the ActorSystem, so the runtime never imports the domain.
 */
export interface ActorKindsModule {
  kinds: Record<string, ActorKind>;
  /** Optional per-thread setup run once before any actor is created. */
  init?(env: ActorEnv): void | Promise<void>;
  /** Optional per-thread teardown, after every actor of the thread has stopped (flush buffers here). */
  close?(): void | Promise<void>;
}
