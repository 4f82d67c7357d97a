/**
 * Entry of the analytics writer thread (see ThreadedEventWriter): opens the analytics LMDB
 * environment, encodes each batch it is sent and commits them about once a second, so the work
 * of recording never runs on the threads that serve requests or turns.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Unpackr } from 'msgpackr';
import { LmdbStore, lowerThreadPriority } from '../../runtime/index.js';
import type { NewAnalyticsEvent } from './analytics-event.js';
import { BatchEncoder } from './event-batch.js';
import { EventStore } from './event-store.js';

// Recording is background work: at the lowest CPU priority the writer yields to the threads that
// serve requests and run turns. If it falls behind, recorders' queues fill and shed analytics
// with a counter; chats never wait for it.
lowerThreadPriority();

const options = workerData as { path: string; durability: 'commit' | 'flush'; retentionDays: number };
const store = new LmdbStore({ path: options.path, durability: options.durability });
const events = new EventStore(store, { retentionDays: options.retentionDays });

/** A transaction is written this long after the first batch waiting for it, or at this many events. */
const COMMIT_MS = 1000;
const COMMIT_EVENTS = 50_000;
/** The session index is compacted (session-index.ts) at most this often, after a commit. */
const COMPACT_EVERY_MS = 10_000;
let compactedAt = 0;

type Message = { seq: number; events: Uint8Array } | { commit: true } | { close: true };
const unpackr = new Unpackr({ useRecords: true });
// Batches are encoded as they arrive (the recorder sends small ones, so their events die young
// on both threads) and committed together: one transaction, one fsync and one rollup merge per
// second, instead of per batch. A batch is acknowledged once its transaction has committed.
const encoder = new BatchEncoder();
let waiting: number[] = [];
let timer: NodeJS.Timeout | undefined;
let committing: Promise<void> | undefined;

function commitLater(delayMs: number): void {
  if (timer && delayMs > 0) return;
  if (timer) clearTimeout(timer);
  timer = setTimeout(() => void commit(), delayMs);
}

async function commit(): Promise<void> {
  if (timer) clearTimeout(timer);
  timer = undefined;
  while (committing) await committing;
  if (waiting.length === 0) return;
  const seqs = waiting;
  waiting = [];
  const batch = encoder.take();
  committing = events.writeEncoded([batch]).then(
    () => {
      for (const seq of seqs) parentPort!.postMessage({ seq, ok: true });
    },
    (err: unknown) => {
      for (const seq of seqs) parentPort!.postMessage({ seq, ok: false, error: String(err) });
    },
  );
  await committing;
  if (Date.now() - compactedAt >= COMPACT_EVERY_MS) {
    compactedAt = Date.now();
    committing = events.compactSessions().then(
      () => undefined,
      () => undefined, // retried on the next pass
    );
    await committing;
  }
  committing = undefined;
}

parentPort!.on('message', (msg: Message) => {
  if ('close' in msg) {
    void commit().then(() => store.close()).then(() => parentPort!.postMessage({ closed: true }));
    return;
  }
  if ('commit' in msg) {
    void commit();
    return;
  }
  try {
    encoder.add(events.rowsOf(unpackr.unpack(msg.events) as NewAnalyticsEvent[]));
    waiting.push(msg.seq);
  } catch (err) {
    parentPort!.postMessage({ seq: msg.seq, ok: false, error: String(err) });
    return;
  }
  commitLater(encoder.events >= COMMIT_EVENTS ? 0 : COMMIT_MS);
});
