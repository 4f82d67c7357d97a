/**
 * Entry of the analytics writer thread (see ThreadedEventWriter): opens the LMDB environment
 * and writes each batch it is sent, so the LMDB work of recording never runs on the thread that
 * serves requests or turns.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { LmdbStore } from '../../runtime/index.js';
import type { AnalyticsEvent } from './analytics-event.js';
import { EventStore } from './event-store.js';

const options = workerData as { path: string; durability: 'commit' | 'flush'; retentionDays: number };
const store = new LmdbStore({ path: options.path, durability: options.durability });
const events = new EventStore(store, { retentionDays: options.retentionDays });

parentPort!.on('message', (msg: { seq: number; events: AnalyticsEvent[] } | { close: true }) => {
  if ('close' in msg) {
    void store.close().then(() => parentPort!.postMessage({ closed: true }));
    return;
  }
  events.write(msg.events).then(
    () => parentPort!.postMessage({ seq: msg.seq, ok: true }),
    (err: unknown) => parentPort!.postMessage({ seq: msg.seq, ok: false, error: String(err) }),
  );
});
