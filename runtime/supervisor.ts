/**
 * Worker supervision: one small state machine per worker slot.
 *
 * | state    | event                                         | action                                                     | next     |
 * |----------|-----------------------------------------------|------------------------------------------------------------|----------|
 * | (none)   | start, or respawn after a death               | spawn a Worker, arm the start-up timer                     | starting |
 * | starting | `ready` message                               | reset the start-up death count; rehome and rebalance       | ready    |
 * | starting | exit / error / start-up timer fires           | count a start-up death; terminate; fail its asks; rehome   | dead     |
 * | ready    | exit / error                                  | terminate; fail its in-flight asks (503); rehome its shards | dead     |
 * | ready    | no pong within pingTimeoutMs (stuck thread)   | same as a death                                            | dead     |
 * | dead     | start-up deaths < maxStartupDeaths            | respawn                                                    | starting |
 * | dead     | start-up deaths >= maxStartupDeaths           | stop respawning; asks it would serve fail with 503         | failed   |
 * | any      | close()                                       | `shutdown`, terminate after shutdownGraceMs                | closing  |
 * | closing  | exit                                          | none (a requested close is not a death)                    | closed   |
 *
 * Start-up deaths are counted across slots and reset whenever any worker becomes ready, so a
 * broken kinds module stops the respawning quickly while a worker crashing under load (after it
 * was ready) is always replaced. The routing side (which asks fail, where shards go) belongs to
 * ActorSystem; this file only runs threads and tells it what happened.
 */
import { Worker } from 'node:worker_threads';
import { decodeAll, encode } from './codec.js';
import { PortBatcher } from './port-batcher.js';
import type { Logger } from './log.js';
import type { WorkerToMain } from './thread-messages.js';
import type { WorkerBootData } from './worker-main.js';

/** State of a worker slot; see the table at the top of supervisor.ts. */
export type WorkerState = 'starting' | 'ready' | 'dead' | 'failed' | 'closing' | 'closed';

/** What the supervisor reports to its owner (the ActorSystem). */
export interface SupervisorHooks {
  /** A slot's worker sent `ready`. */
  onReady(slot: WorkerSlot): void;
  /** A slot's worker died (state already `dead` or `failed`); fail its asks and move its shards. */
  onDeath(slot: WorkerSlot, reason: string): void;
  /** Any other message from a live worker. */
  onMessage(slot: WorkerSlot, message: WorkerToMain): void;
}

/** Options of the Supervisor. */
export interface SupervisorOptions {
  workers: number;
  workerUrl: URL;
  boot: (index: number) => WorkerBootData;
  pingIntervalMs: number;
  pingTimeoutMs: number;
  startTimeoutMs: number;
  maxStartupDeaths: number;
  shutdownGraceMs: number;
  log: Logger;
  hooks: SupervisorHooks;
}

/** One worker position; its thread is replaced on death, its index (and home shards) stay. */
export class WorkerSlot {
  state: WorkerState = 'starting';
  worker: Worker | null = null;
  threadId = -1;
  /** Bumped on every spawn and death so events of a replaced thread are ignored. */
  generation = 0;
  /** Asks posted to the current thread and not yet settled. */
  inFlight = 0;
  /** Replacements spawned so far. */
  restarts = 0;
  pingSentAt = 0;
  pingSeq = 0;
  startTimer: NodeJS.Timeout | undefined = undefined;

  constructor(readonly index: number) {}

  /** Batches transfers to the current thread; replaced with the thread. */
  batcher: PortBatcher | null = null;

  /** Sends an encoded message to the thread at the end of this turn (the caller checked the state). */
  post(buf: ArrayBuffer): void {
    this.batcher!.push(buf);
  }
}

/** Spawns, pings, replaces and stops the worker threads. */
export class Supervisor {
  readonly slots: readonly WorkerSlot[];
  readonly #options: SupervisorOptions;
  readonly #hooks: SupervisorHooks;
  readonly #log: Logger;
  readonly #pingTimer: NodeJS.Timeout;
  #startupDeaths = 0;
  #closing = false;

  constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#hooks = options.hooks;
    this.#log = options.log;
    const slots: WorkerSlot[] = [];
    for (let i = 0; i < options.workers; i++) slots.push(new WorkerSlot(i));
    this.slots = slots;
    for (const slot of slots) this.#spawn(slot);
    this.#pingTimer = setInterval(() => this.#ping(), options.pingIntervalMs);
    this.#pingTimer.unref();
  }

  /** Stops every worker: `shutdown` first, terminate after the grace period. Safe to call twice. */
  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#pingTimer);
    await Promise.all(this.slots.map((slot) => this.#stop(slot)));
  }

  #spawn(slot: WorkerSlot): void {
    const worker = new Worker(this.#options.workerUrl, { workerData: this.#options.boot(slot.index) });
    const generation = ++slot.generation;
    slot.worker = worker;
    slot.batcher = new PortBatcher((buf) => worker.postMessage(buf, [buf]));
    slot.state = 'starting';
    slot.threadId = worker.threadId;
    slot.pingSentAt = 0;
    slot.startTimer = setTimeout(() => this.#died(slot, generation, 'start-up timed out'), this.#options.startTimeoutMs);
    slot.startTimer.unref();
    worker.on('message', (buf: ArrayBuffer) => {
      for (const msg of decodeAll<WorkerToMain>(buf)) {
        if (slot.generation !== generation) return;
        if (msg.type === 'pong') slot.pingSentAt = 0;
        else if (msg.type === 'ready') this.#ready(slot);
        else this.#hooks.onMessage(slot, msg);
      }
    });
    worker.on('error', (err: Error) => this.#died(slot, generation, `uncaught ${err.name}: ${err.message}`));
    worker.on('exit', (code: number) => this.#died(slot, generation, `exited with code ${code}`));
  }

  #ready(slot: WorkerSlot): void {
    if (slot.state !== 'starting') return;
    clearTimeout(slot.startTimer);
    slot.state = 'ready';
    this.#startupDeaths = 0;
    this.#log.info('worker ready', { worker: slot.index, threadId: slot.threadId });
    this.#hooks.onReady(slot);
  }

  #died(slot: WorkerSlot, generation: number, reason: string): void {
    if (slot.generation !== generation) return;
    if (slot.state === 'closing' || slot.state === 'closed') return;
    const duringStartup = slot.state === 'starting';
    clearTimeout(slot.startTimer);
    slot.generation++;
    const worker = slot.worker;
    slot.worker = null;
    // A stuck thread never exits by itself; terminate also works on a tight JS loop.
    worker?.terminate().catch(() => undefined);
    if (duringStartup) this.#startupDeaths++;
    const giveUp = this.#startupDeaths >= this.#options.maxStartupDeaths;
    slot.state = giveUp ? 'failed' : 'dead';
    this.#log.error('worker died', { worker: slot.index, reason, duringStartup, startupDeaths: this.#startupDeaths });
    this.#hooks.onDeath(slot, reason);
    if (giveUp) {
      this.#log.error('workers keep dying during start-up: not respawning', { worker: slot.index });
      return;
    }
    setImmediate(() => {
      if (this.#closing || slot.state !== 'dead') return;
      slot.restarts++;
      this.#spawn(slot);
    });
  }

  #ping(): void {
    const now = Date.now();
    for (const slot of this.slots) {
      if (slot.state !== 'ready') continue;
      if (slot.pingSentAt === 0) {
        slot.pingSentAt = now;
        slot.post(encode({ type: 'ping', seq: ++slot.pingSeq }));
      } else if (now - slot.pingSentAt > this.#options.pingTimeoutMs) {
        this.#died(slot, slot.generation, `no pong within ${this.#options.pingTimeoutMs} ms (thread stuck)`);
      }
    }
  }

  #stop(slot: WorkerSlot): Promise<void> {
    clearTimeout(slot.startTimer);
    const worker = slot.worker;
    const wasReady = slot.state === 'ready';
    if (worker === null) {
      slot.state = 'closed';
      return Promise.resolve();
    }
    if (slot.state === 'closing') return new Promise((resolve) => worker.once('exit', () => resolve()));
    slot.state = 'closing';
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => void worker.terminate(), this.#options.shutdownGraceMs);
      worker.once('exit', () => {
        clearTimeout(timer);
        slot.state = 'closed';
        slot.worker = null;
        resolve();
      });
      if (wasReady) slot.post(encode({ type: 'shutdown' }));
      else void worker.terminate();
    });
  }
}
