import type { ActorEnv, ActorKindsModule, ActorRef, AskOptions } from './actor.js';
import { ActorHost } from './actor-host.js';
import { encode } from './codec.js';
import type { Config } from './config.js';
import { ParleyError, type ErrorValue } from './errors.js';
import type { Logger } from './log.js';
import type { ReplySink } from './mailbox.js';
import { PendingAsks, type PendingAsk } from './pending-asks.js';
import { SafeEmitter } from './safe-emitter.js';
import { ShardMap, shardOf, workerOwner } from './shard-map.js';
import { LmdbStore } from './store/lmdb-store.js';
import type { Store } from './store/store.js';
import { Supervisor, type WorkerSlot, type WorkerState } from './supervisor.js';
import { unreachable, type AskMessage, type MainToWorker, type WorkerToMain } from './thread-messages.js';

/** Options of ActorSystem.start. */
export interface ActorSystemOptions {
  config: Config;
  log: Logger;
  /** File URL (string) of the ActorKindsModule every worker imports. */
  kindsModule: string;
  /** Store for actors hosted on the main thread (workers = 0); opened from config.dataDir when absent. */
  store?: Store;
  /** How often each worker is pinged, in ms (default 1000). */
  pingIntervalMs?: number;
  /** A worker that has not answered a ping after this many ms is stuck and replaced (default 5000). */
  pingTimeoutMs?: number;
  /** A worker that is not ready after this many ms counts as a start-up death (default 30000). */
  startTimeoutMs?: number;
  /** Consecutive start-up deaths after which workers are no longer respawned (default 3). */
  maxStartupDeaths?: number;
  /** How long close() lets workers passivate their actors before terminating them (default 5000). */
  shutdownGraceMs?: number;
}

/** Events of an ActorSystem; listeners cannot break it (their exceptions are logged). */
export interface ActorSystemEvents {
  /** A worker (first start or replacement) is up and serving its shards. */
  'worker-ready': (info: { index: number; threadId: number }) => void;
  /** A worker died unexpectedly (crash, exit, stuck); not emitted for a requested close. */
  'worker-died': (info: { index: number; reason: string }) => void;
  /** Workers kept dying during start-up: this slot will not be respawned. */
  'worker-failed': (info: { index: number }) => void;
  /** close() finished. */
  close: () => void;
}

/** One worker in stats(). */
export interface WorkerStats {
  index: number;
  state: WorkerState;
  threadId: number;
  /** Shards this worker owns now. */
  shards: number;
  /** Asks posted to it and not yet answered. */
  inFlight: number;
  /** Replacements spawned for this slot. */
  restarts: number;
}

/** A snapshot for health checks, the admin API and tests. */
export interface ActorSystemStats {
  ready: boolean;
  /** Empty when actors run on the main thread (workers = 0). */
  workers: WorkerStats[];
  pendingAsks: number;
  /** Replies that came after their ask had ended (timeout, dead worker). */
  droppedReplies: number;
  /** Shards being handed from one worker to another. */
  movingShards: number;
}

// A message that cannot be posted yet: its shard is moving, or its owner has no live thread.
class Buffered {
  constructor(
    readonly shard: number,
    readonly buf: ArrayBuffer,
    readonly entry: PendingAsk | null,
  ) {}
}

// A shard handoff in progress: `from` drains and passivates, new messages wait in `buffer`.
class Move {
  readonly buffer: Buffered[] = [];
  constructor(
    readonly from: number,
    readonly to: number,
  ) {}
}

const CLOSED: ErrorValue = { code: 'SERVICE_UNAVAILABLE', message: 'The actor system is closed' };
const WORKER_DIED: ErrorValue = { code: 'SERVICE_UNAVAILABLE', message: 'The worker hosting the actor stopped; retry' };
const NO_WORKERS: ErrorValue = { code: 'SERVICE_UNAVAILABLE', message: 'No worker is available to host the actor' };

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) throw new TypeError(`options.${name} must be a positive integer (got ${value})`);
  return value;
}

/**
 * The main-thread side of the actor runtime: places actors on workers by shard, routes asks and
 * tells (including those actors send each other), enforces ask deadlines, and supervises workers.
 * With config.workers = 0 it hosts the actors itself (the single-thread baseline).
 */
export class ActorSystem {
  readonly #config: Config;
  readonly #log: Logger;
  readonly #events: SafeEmitter<ActorSystemEvents>;
  readonly #pending: PendingAsks;
  readonly #shards: number;
  #supervisor: Supervisor | null = null;
  #map: ShardMap | null = null;
  #slots: readonly WorkerSlot[] = [];
  #moving: (Move | undefined)[] = [];
  #waiting: Buffered[][] = [];
  #host: ActorHost | null = null;
  #kindsModule: ActorKindsModule | undefined;
  #ownedStore: Store | null = null;
  #closed = false;
  #closing: Promise<void> | null = null;
  #started: () => void = () => undefined;
  // False until every worker has come up once (or given up): before that, the first worker to
  // be ready would grab every shard only to hand them back a moment later.
  #startedUp = false;

  private constructor(config: Config, log: Logger) {
    this.#config = config;
    this.#log = log;
    this.#shards = config.shards;
    this.#events = new SafeEmitter(log);
    this.#pending = new PendingAsks(log, (entry) => {
      if (entry.worker >= 0) this.#slots[entry.worker]!.inFlight--;
    });
  }

  /**
   * Starts the workers (or the in-process host) and resolves once every worker is ready, or once
   * the supervisor gave up on start-up deaths (then `ready` is false and asks fail with 503).
   */
  static async start(options: ActorSystemOptions): Promise<ActorSystem> {
    const { config, log, kindsModule } = options;
    if (!Number.isInteger(config.workers) || config.workers < 0) throw new TypeError('config.workers must be a non-negative integer');
    positiveInt('config.shards', config.shards, 1);
    positiveInt('config.askTimeoutMs', config.askTimeoutMs, 1);
    positiveInt('config.mailboxLimit', config.mailboxLimit, 1);
    positiveInt('config.actorIdleMs', config.actorIdleMs, 1);
    if (typeof kindsModule !== 'string' || !URL.canParse(kindsModule)) throw new TypeError('options.kindsModule must be a file URL string');
    const system = new ActorSystem(config, log);
    if (config.workers === 0) await system.#startInProcess(options);
    else await system.#startWorkers(options);
    return system;
  }

  /** True while every worker is up (always, in-process) and close() was not called. */
  get ready(): boolean {
    if (this.#closed) return false;
    for (const slot of this.#slots) if (slot.state !== 'ready') return false;
    return true;
  }

  /** Sends `message` to the actor and resolves with its reply; rejects only with a ParleyError. */
  ask<T = unknown>(ref: ActorRef, message: unknown, options?: AskOptions): Promise<T> {
    if (this.#closed) return Promise.reject(new ParleyError(CLOSED.code, CLOSED.message));
    if (typeof ref?.kind !== 'string' || typeof ref.key !== 'string') return Promise.reject(new ParleyError('BAD_REQUEST', 'ref must be { kind: string, key: string }'));
    const timeoutMs = options?.timeoutMs ?? this.#config.askTimeoutMs;
    if (!(timeoutMs > 0)) return Promise.reject(new ParleyError('BAD_REQUEST', 'options.timeoutMs must be a positive number'));
    const onChunk = options?.onChunk;
    const requestId = options?.requestId;
    return new Promise<T>((resolve, reject) => {
      const entry = this.#pending.open(timeoutMs, resolve as (value: unknown) => void, reject, onChunk);
      const host = this.#host;
      if (host !== null) {
        // Shard 0: in-process shards are never released, so skip the hash.
        host.deliver(ref.kind, ref.key, 0, message, requestId, entry.id, onChunk !== undefined);
        return;
      }
      const shard = shardOf(ref.key, this.#shards);
      let buf: ArrayBuffer;
      try {
        buf = encode({ type: 'ask', id: entry.id, kind: ref.kind, key: ref.key, shard, message, requestId: requestId ?? null, stream: onChunk !== undefined, timeoutMs });
      } catch (err) {
        this.#log.error('ask message could not be encoded', { kind: ref.kind, key: ref.key, requestId, err });
        this.#pending.fail(entry.id, { code: 'BAD_REQUEST', message: 'The message cannot be sent to an actor' });
        return;
      }
      this.#route(shard, buf, entry);
    });
  }

  /** Fire-and-forget message; dropped (and logged) when the actor cannot take it. */
  tell(ref: ActorRef, message: unknown): void {
    if (this.#closed) return;
    if (this.#host !== null) {
      this.#host.deliver(ref.kind, ref.key, 0, message, undefined, 0, false);
      return;
    }
    const shard = shardOf(ref.key, this.#shards);
    this.#route(shard, encode({ type: 'tell', kind: ref.kind, key: ref.key, shard, message }), null);
  }

  /** Adds an event listener. */
  on<K extends keyof ActorSystemEvents>(event: K, listener: ActorSystemEvents[K]): void {
    this.#events.on(event, listener);
  }

  /** Removes an event listener. */
  off<K extends keyof ActorSystemEvents>(event: K, listener: ActorSystemEvents[K]): void {
    this.#events.off(event, listener);
  }

  /** A snapshot of workers, shards and pending asks. */
  stats(): ActorSystemStats {
    const counts = this.#map?.counts();
    let moving = 0;
    for (const m of this.#moving) if (m !== undefined) moving++;
    return {
      ready: this.ready,
      workers: this.#slots.map((slot) => ({
        index: slot.index,
        state: slot.state,
        threadId: slot.threadId,
        shards: counts?.get(workerOwner(slot.index)) ?? 0,
        inFlight: slot.inFlight,
        restarts: slot.restarts,
      })),
      pendingAsks: this.#pending.size,
      droppedReplies: this.#pending.dropped,
      movingShards: moving,
    };
  }

  /** Fails pending asks and stops the workers (or the in-process host); safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    this.#pending.failWhere(() => true, CLOSED);
    this.#moving = [];
    this.#waiting = this.#waiting.map(() => []);
    try {
      await this.#supervisor?.close();
      await this.#host?.close();
      await this.#kindsModule?.close?.();
      await this.#ownedStore?.close();
    } finally {
      this.#events.emit('close');
    }
  }

  async #startInProcess(options: ActorSystemOptions): Promise<void> {
    const config = this.#config;
    let store = options.store;
    if (store === undefined) {
      store = new LmdbStore({ path: config.dataDir, durability: config.durability });
      this.#ownedStore = store;
    }
    const env: ActorEnv = {
      store,
      log: this.#log,
      config,
      workerIndex: -1,
      ask: (ref, message, askOptions) => this.ask(ref, message, askOptions),
      tell: (ref, message) => this.tell(ref, message),
    };
    const pending = this.#pending;
    const sink: ReplySink = {
      reply: (id, value) => pending.reply(id, value),
      fail: (id, error) => pending.fail(id, error),
      chunk: (id, chunk) => pending.chunk(id, chunk),
    };
    try {
      const mod = (await import(options.kindsModule)) as ActorKindsModule;
      this.#kindsModule = mod;
      await mod.init?.(env);
      this.#host = new ActorHost({ kinds: mod.kinds, env, sink, mailboxLimit: config.mailboxLimit, idleMs: config.actorIdleMs, log: this.#log });
    } catch (err) {
      await this.#ownedStore?.close();
      throw err;
    }
  }

  async #startWorkers(options: ActorSystemOptions): Promise<void> {
    const config = this.#config;
    const workers = config.workers;
    this.#map = new ShardMap(this.#shards, (shard) => workerOwner(shard % workers));
    this.#moving = new Array<Move | undefined>(this.#shards).fill(undefined);
    this.#waiting = Array.from({ length: workers }, () => []);
    const started = new Promise<void>((resolve) => (this.#started = resolve));
    this.#supervisor = new Supervisor({
      workers,
      workerUrl: new URL('./worker-main.js', import.meta.url),
      boot: (index) => ({ kindsModule: options.kindsModule, config, index }),
      pingIntervalMs: positiveInt('pingIntervalMs', options.pingIntervalMs, 1000),
      pingTimeoutMs: positiveInt('pingTimeoutMs', options.pingTimeoutMs, 5000),
      startTimeoutMs: positiveInt('startTimeoutMs', options.startTimeoutMs, 30_000),
      maxStartupDeaths: positiveInt('maxStartupDeaths', options.maxStartupDeaths, 3),
      shutdownGraceMs: positiveInt('shutdownGraceMs', options.shutdownGraceMs, 5000),
      log: this.#log,
      hooks: {
        onReady: (slot) => this.#workerReady(slot),
        onDeath: (slot, reason) => this.#workerDied(slot, reason),
        onMessage: (slot, message) => this.#fromWorker(slot, message),
      },
    });
    this.#slots = this.#supervisor.slots;
    await started;
  }

  #checkStarted(): void {
    if (this.#startedUp) return;
    for (const slot of this.#slots) if (slot.state !== 'ready' && slot.state !== 'failed') return;
    this.#startedUp = true;
    this.#rebalance();
    this.#started();
  }

  // The one place that decides where a message goes. A remote owner would be sent over the
  // cluster transport here; today every owner is a local worker.
  #route(shard: number, buf: ArrayBuffer, entry: PendingAsk | null): void {
    const move = this.#moving[shard];
    if (move !== undefined) {
      move.buffer.push(new Buffered(shard, buf, entry));
      return;
    }
    const index = this.#map!.owner(shard).index;
    const slot = this.#slots[index]!;
    if (slot.state === 'ready') {
      if (entry !== null) {
        entry.worker = index;
        slot.inFlight++;
      }
      slot.post(buf);
    } else if (slot.state === 'starting' || slot.state === 'dead') {
      // Only when no worker survives: wait for the replacement, bounded by the ask's own deadline.
      this.#waiting[index]!.push(new Buffered(shard, buf, entry));
    } else if (entry !== null) {
      this.#pending.fail(entry.id, this.#closed ? CLOSED : NO_WORKERS);
    } else if (!this.#closed) {
      this.#log.warn('tell dropped: no worker can host its shard', { shard });
    }
  }

  #fromWorker(slot: WorkerSlot, msg: WorkerToMain): void {
    switch (msg.type) {
      case 'reply':
        this.#pending.reply(msg.id, msg.value);
        break;
      case 'failure':
        this.#pending.fail(msg.id, msg.error);
        break;
      case 'chunk':
        this.#pending.chunk(msg.id, msg.chunk);
        break;
      case 'ask':
        this.#relayAsk(slot, msg);
        break;
      case 'tell':
        if (!this.#closed) this.#route(msg.shard, encode(msg), null);
        break;
      case 'released':
        this.#released(slot, msg.shards);
        break;
      case 'pong':
      case 'ready':
        break; // handled by the supervisor
      default:
        unreachable(msg);
    }
  }

  // An actor asked another actor: the main thread owns placement, so it routes the ask and
  // carries the outcome back to the asking worker (if that thread is still the same one).
  #relayAsk(slot: WorkerSlot, msg: AskMessage): void {
    const origin = slot.index;
    const generation = slot.generation;
    const remoteId = msg.id;
    const back = (message: MainToWorker): void => {
      const s = this.#slots[origin]!;
      if (s.generation === generation && s.state === 'ready') s.post(encode(message));
    };
    if (this.#closed) {
      back({ type: 'failure', id: remoteId, error: CLOSED });
      return;
    }
    const entry = this.#pending.open(
      msg.timeoutMs,
      (value) => back({ type: 'reply', id: remoteId, value }),
      (error) => back({ type: 'failure', id: remoteId, error: error.toValue() }),
      msg.stream ? (chunk) => back({ type: 'chunk', id: remoteId, chunk }) : undefined,
    );
    msg.id = entry.id;
    this.#route(msg.shard, encode(msg), entry);
  }

  #workerReady(slot: WorkerSlot): void {
    this.#rebalance();
    this.#events.emit('worker-ready', { index: slot.index, threadId: slot.threadId });
    this.#checkStarted();
  }

  #workerDied(slot: WorkerSlot, reason: string): void {
    // Fail what it was handling at once: its replies will never come, and none may hang.
    const index = slot.index;
    this.#pending.failWhere((entry) => entry.worker === index, WORKER_DIED);
    this.#rebalance();
    this.#events.emit('worker-died', { index, reason });
    if (slot.state === 'failed') this.#events.emit('worker-failed', { index });
    this.#checkStarted();
  }

  #released(slot: WorkerSlot, shards: number[]): void {
    for (const shard of shards) {
      const move = this.#moving[shard];
      if (move !== undefined && move.from === slot.index) this.#finishMove(shard, move, this.#readyIndexes());
    }
  }

  #finishMove(shard: number, move: Move, ready: number[]): void {
    const target = this.#slots[move.to]!.state === 'ready' ? move.to : this.#homeFor(shard, ready);
    this.#map!.assign(shard, workerOwner(target === -1 ? move.to : target));
    this.#moving[shard] = undefined;
    for (const b of move.buffer) if (b.entry === null || !b.entry.settled) this.#route(b.shard, b.buf, b.entry);
  }

  #readyIndexes(): number[] {
    const ready: number[] = [];
    for (const slot of this.#slots) if (slot.state === 'ready') ready.push(slot.index);
    return ready;
  }

  // Home worker of a shard if it is up, else a live worker chosen by shard, else -1 (none up).
  #homeFor(shard: number, ready: number[]): number {
    const home = shard % this.#slots.length;
    if (this.#slots[home]!.state === 'ready') return home;
    return ready.length === 0 ? -1 : ready[shard % ready.length]!;
  }

  /**
   * Brings the shard map in line with which workers are up. Shards of a dead worker move at once
   * (its actors are gone with it); shards away from their home go back through a handoff once
   * the home worker is ready, so an actor is never alive on two workers.
   */
  #rebalance(): void {
    if (this.#closed || !this.#startedUp) return;
    const map = this.#map!;
    const slots = this.#slots;
    const ready = this.#readyIndexes();
    const releases = new Map<number, number[]>();
    for (let shard = 0; shard < this.#shards; shard++) {
      const move = this.#moving[shard];
      if (move !== undefined) {
        if (slots[move.from]!.state !== 'ready') this.#finishMove(shard, move, ready);
        continue;
      }
      const current = map.owner(shard).index;
      const target = this.#homeFor(shard, ready);
      if (target === -1 || target === current) continue;
      if (slots[current]!.state !== 'ready') {
        map.assign(shard, workerOwner(target));
      } else if (target === shard % slots.length) {
        this.#moving[shard] = new Move(current, target);
        let list = releases.get(current);
        if (list === undefined) releases.set(current, (list = []));
        list.push(shard);
      }
    }
    for (const [from, shards] of releases) slots[from]!.post(encode({ type: 'release', shards }));
    // Messages that waited for a thread: deliver them where their shard lives now.
    for (let i = 0; i < this.#waiting.length; i++) {
      const queue = this.#waiting[i]!;
      if (queue.length === 0) continue;
      this.#waiting[i] = [];
      for (const b of queue) if (b.entry === null || !b.entry.settled) this.#route(b.shard, b.buf, b.entry);
    }
  }
}
