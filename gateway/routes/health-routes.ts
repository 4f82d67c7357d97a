import type { RouteModule } from '../app.js';
import { json } from '../http.js';

/** GET /healthz (the process answers) and GET /readyz (store open and actor workers up). */
export const healthRoutes: RouteModule = (deps) => [
  { method: 'GET', path: '/healthz', auth: 'none', handler: () => json({ status: 'ok' }) },
  {
    method: 'GET',
    path: '/readyz',
    auth: 'none',
    handler: () => {
      const checks = { store: deps.store.isOpen, workers: deps.actors.ready };
      const ready = checks.store && checks.workers;
      return json({ status: ready ? 'ready' : 'not_ready', checks }, ready ? 200 : 503);
    },
  },
];
