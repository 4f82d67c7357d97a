/**
 * Every message that crosses a thread boundary, declared once as tagged unions so that each
 * receiver's switch is exhaustive. Ids of asks live in the sender's namespace: an `ask` from the
 * main thread carries a main id, and the `reply`/`failure`/`chunk` for it carries the same id back.
 */
import type { ErrorValue } from './errors.js';

/** Asks an actor for a reply; `stream` says whether the asker wants chunks. */
export interface AskMessage {
  type: 'ask';
  id: number;
  kind: string;
  key: string;
  /** Computed by the sender (a pure function of the key), so receivers never re-hash. */
  shard: number;
  message: unknown;
  requestId: string | null;
  stream: boolean;
  /** The asker's deadline; the main thread bounds a relayed ask by it. */
  timeoutMs: number;
}

/** Fire-and-forget message to an actor. */
export interface TellMessage {
  type: 'tell';
  kind: string;
  key: string;
  shard: number;
  message: unknown;
}

/** The successful answer to the ask with this id. */
export interface ReplyMessage {
  type: 'reply';
  id: number;
  value: unknown;
}

/** The error answer to the ask with this id (a value: errors lose their prototype across threads). */
export interface FailureMessage {
  type: 'failure';
  id: number;
  error: ErrorValue;
}

/** One streamed chunk ahead of the reply to the ask with this id. */
export interface ChunkMessage {
  type: 'chunk';
  id: number;
  chunk: unknown;
}

/** Main asks a worker to passivate the actors of these shards and stop owning them. */
export interface ReleaseMessage {
  type: 'release';
  shards: number[];
}

/** A worker has drained and passivated every actor of these shards. */
export interface ReleasedMessage {
  type: 'released';
  shards: number[];
}

/** Liveness probe; a worker that cannot answer in time is considered stuck. */
export interface PingMessage {
  type: 'ping';
  seq: number;
}

/** Answer to a ping. */
export interface PongMessage {
  type: 'pong';
  seq: number;
}

/** The worker loaded its kinds module and opened its store. */
export interface ReadyMessage {
  type: 'ready';
  threadId: number;
}

/** Main asks a worker to passivate everything, close its store and exit. */
export interface ShutdownMessage {
  type: 'shutdown';
}

/** Everything the main thread sends to a worker. */
export type MainToWorker = AskMessage | TellMessage | ReplyMessage | FailureMessage | ChunkMessage | ReleaseMessage | PingMessage | ShutdownMessage;

/** Everything a worker sends to the main thread. */
export type WorkerToMain = AskMessage | TellMessage | ReplyMessage | FailureMessage | ChunkMessage | ReleasedMessage | PongMessage | ReadyMessage;

/** Any thread message. */
export type ThreadMessage = MainToWorker | WorkerToMain;

/** Compile-time exhaustiveness check for switches over message types. */
export function unreachable(x: never): never {
  throw new Error(`Unexpected thread message ${JSON.stringify(x)}`);
}
