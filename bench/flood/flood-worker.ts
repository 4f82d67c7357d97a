import { parentPort, workerData } from 'node:worker_threads';
import { runLoad } from '../lib/http-load.js';

/** What the flooding tenant's load generator is told. */
export interface FloodOrder {
  port: number;
  key: string;
  projectId: string;
  connections: number;
  durationMs: number;
}

// Tenant A's flood runs on its own thread so that its event loop does not delay tenant B's
// client, whose latencies are the measurement.
const order = workerData as FloodOrder;
const headers = { authorization: `Bearer ${order.key}`, 'content-type': 'application/json' };
const body = JSON.stringify({ projectId: order.projectId, message: 'hi there' });
let refused = 0;
const { result } = await runLoad({
  port: order.port,
  connections: order.connections,
  durationMs: order.durationMs,
  request: () => ({ method: 'POST', path: '/api/v1/chat/send', headers, body }),
  onResponse: (_c, _s, status) => {
    if (status === 429) refused++;
  },
});
parentPort!.postMessage({ result, refused });
