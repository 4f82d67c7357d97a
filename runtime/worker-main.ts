/**
 * Entry of a worker thread: loads the kinds module named in workerData, opens its own LmdbStore
 * on the shared data folder, hosts actors and answers pings. It talks to the main thread only in
 * encoded, transferred buffers.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import type { ActorEnv, ActorKindsModule, ActorRef, AskOptions } from './actor.js';
import { ActorHost } from './actor-host.js';
import { decodeAll, encode } from './codec.js';
import { PortBatcher } from './port-batcher.js';
import type { Config } from './config.js';
import { createLogger } from './log.js';
import type { ReplySink } from './mailbox.js';
import { PendingAsks } from './pending-asks.js';
import { shardOf } from './shard-map.js';
import { LmdbStore } from './store/lmdb-store.js';
import { unreachable, type MainToWorker, type WorkerToMain } from './thread-messages.js';

/** What the main thread hands a worker at spawn (structured-cloned once, not per message). */
export interface WorkerBootData {
  kindsModule: string;
  config: Config;
  index: number;
}

const port = parentPort;
if (port === null) throw new Error('worker-main.js must run in a worker thread');
const { kindsModule, config, index } = workerData as WorkerBootData;
const log = createLogger(config.logLevel, { worker: index });

const batcher = new PortBatcher((buf) => port!.postMessage(buf, [buf]));
function post(message: WorkerToMain): void {
  batcher.push(encode(message));
}

const store = new LmdbStore({ path: config.dataDir, durability: config.durability });
const pending = new PendingAsks(log);

const env: ActorEnv = {
  store,
  log,
  config,
  workerIndex: index,
  ask<T>(ref: ActorRef, message: unknown, options?: AskOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timeoutMs = options?.timeoutMs ?? config.askTimeoutMs;
      const onChunk = options?.onChunk;
      const entry = pending.open(timeoutMs, resolve as (v: unknown) => void, reject, onChunk);
      try {
        // Placement is decided on the main thread: every actor-to-actor message goes through it.
        post({ type: 'ask', id: entry.id, kind: ref.kind, key: ref.key, shard: shardOf(ref.key, config.shards), message, requestId: options?.requestId ?? null, stream: onChunk !== undefined, timeoutMs });
      } catch (err) {
        log.error('ask could not be encoded', { kind: ref.kind, key: ref.key, err });
        pending.fail(entry.id, { code: 'INTERNAL_ERROR', message: 'Unexpected internal error' });
      }
    });
  },
  tell(ref: ActorRef, message: unknown): void {
    post({ type: 'tell', kind: ref.kind, key: ref.key, shard: shardOf(ref.key, config.shards), message });
  },
};

const sink: ReplySink = {
  reply: (id, value) => post({ type: 'reply', id, value }),
  fail: (id, error) => post({ type: 'failure', id, error }),
  chunk: (id, chunk) => post({ type: 'chunk', id, chunk }),
};

const kindsModuleExports = (await import(kindsModule)) as ActorKindsModule;
if (typeof kindsModuleExports.kinds !== 'object' || kindsModuleExports.kinds === null) throw new Error(`${kindsModule} must export "kinds"`);
await kindsModuleExports.init?.(env);
const host = new ActorHost({ kinds: kindsModuleExports.kinds, env, sink, mailboxLimit: config.mailboxLimit, idleMs: config.actorIdleMs, log });

let shuttingDown = false;
async function shutdown(): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  await host.close();
  await kindsModuleExports.close?.();
  pending.failWhere(() => true, { code: 'SERVICE_UNAVAILABLE', message: 'Worker is shutting down' });
  await store.close();
  batcher.flush();
  process.exit(0);
}

port.on('message', (buf: ArrayBuffer) => {
  for (const msg of decodeAll<MainToWorker>(buf)) handle(msg);
});

function handle(msg: MainToWorker): void {
  switch (msg.type) {
    case 'ask':
      host.deliver(msg.kind, msg.key, msg.shard, msg.message, msg.requestId ?? undefined, msg.id, msg.stream);
      break;
    case 'tell':
      host.deliver(msg.kind, msg.key, msg.shard, msg.message, undefined, 0, false);
      break;
    case 'reply':
      pending.reply(msg.id, msg.value);
      break;
    case 'failure':
      pending.fail(msg.id, msg.error);
      break;
    case 'chunk':
      pending.chunk(msg.id, msg.chunk);
      break;
    case 'release': {
      const shards = msg.shards;
      host.release(shards).then(
        () => post({ type: 'released', shards }),
        (err: unknown) => log.error('shard release failed', { err }),
      );
      break;
    }
    case 'ping':
      post({ type: 'pong', seq: msg.seq });
      break;
    case 'shutdown':
      void shutdown();
      break;
    default:
      unreachable(msg);
  }
}

post({ type: 'ready', threadId });
