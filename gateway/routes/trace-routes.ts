import { ParleyError } from '../../runtime/index.js';
import { EXPORT_DEFAULT_LIMIT, EXPORT_MAX_LIMIT, EventStore, TraceReader, type Project } from '../../actors/index.js';
import type { GatewayDeps, RouteModule } from '../app.js';
import { json, type StreamResult } from '../http.js';
import { intParam, pagination } from '../validate.js';

/** Default look-back of the generations and export endpoints when `from` is absent. */
const DEFAULT_WINDOW_MS = 24 * 3_600_000;

/** A reader over the server's analytics environment (as analytics-routes does: the store holds the data, instances hold no state that reads need). */
export function eventStoreOf(deps: GatewayDeps): EventStore {
  return new EventStore(deps.analytics, { retentionDays: deps.config.analyticsRetentionDays });
}

/** Reads `from`/`to` (ISO 8601) into epoch ms: from default 24 hours before to, to default now; to is exclusive. */
export function timeWindow(query: URLSearchParams, nowMs = Date.now()): { from: number; to: number } {
  const to = isoParam(query, 'to') ?? nowMs;
  const from = isoParam(query, 'from') ?? to - DEFAULT_WINDOW_MS;
  if (from > to) throw new ParleyError('VALIDATION_ERROR', 'from must not be after to', { field: 'from' });
  return { from, to };
}

function isoParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  const ms = Date.parse(raw);
  if (!Number.isFinite(ms)) throw new ParleyError('VALIDATION_ERROR', `${name} must be an ISO 8601 date-time`, { field: name });
  return ms;
}

/** An optional short string query parameter (ids and names). */
function textParam(query: URLSearchParams, name: string): string | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (raw.length > 256) throw new ParleyError('VALIDATION_ERROR', `${name} is too long`, { field: name });
  return raw;
}

/** Streams chunks of a generator, one per event-loop turn, until it ends or the client leaves. */
function csvStream(filename: string, chunks: Generator<string>, log: GatewayDeps['log']): StreamResult {
  return {
    kind: 'stream',
    status: 200,
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${filename}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
    start: (sink) => {
      const pump = (): void => {
        try {
          if (sink.closed) {
            chunks.return(undefined);
            return;
          }
          const next = chunks.next();
          if (next.done) return sink.end();
          sink.write(next.value);
          // Yield between chunks: other requests run, and the socket drains what was written.
          setImmediate(pump);
        } catch (err) {
          // Headers are out already: all that is left is to cut the response short.
          log.error('trace export failed', { err: String(err) });
          sink.end();
        }
      };
      pump();
    },
  };
}

/** Session traces, trace diagnostics, model calls across sessions and the CSV export (permission session:read). */
export const traceRoutes: RouteModule = (deps) => {
  const reader = new TraceReader(eventStoreOf(deps), (tenantId, projectId, sessionId) => deps.sessions.get(tenantId, projectId, sessionId) !== undefined);
  const project = (tenantId: string, projectId: string): Project => deps.tenancy.requireProject(tenantId, projectId);
  return [
    {
      method: 'GET',
      path: '/api/projects/{projectId}/sessions/generations',
      auth: 'principal',
      permission: 'session:read',
      handler: ({ principal, params, req }) => {
        const p = project(principal.tenantId, params['projectId']!);
        const window = timeWindow(req.query);
        const { limit, offset } = pagination(req.query);
        const sessionId = textParam(req.query, 'sessionId');
        const agentName = textParam(req.query, 'agentName');
        const page = reader.generations(p.tenantId, p.id, {
          ...window, limit, offset, ...(sessionId !== undefined ? { sessionId } : {}), ...(agentName !== undefined ? { agentName } : {}),
        });
        return json({ success: true, data: { generations: page.generations, total: page.total, limit, offset, hasMore: offset + page.generations.length < page.total } });
      },
    },
    {
      method: 'GET',
      path: '/api/projects/{projectId}/sessions/export',
      auth: 'principal',
      permission: 'session:read',
      handler: ({ principal, params, req }) => {
        const p = project(principal.tenantId, params['projectId']!);
        const window = timeWindow(req.query);
        const limit = intParam(req.query, 'limit', EXPORT_DEFAULT_LIMIT, 1, EXPORT_MAX_LIMIT);
        const sessionId = textParam(req.query, 'sessionId');
        const chunks = reader.exportCsv(p.tenantId, p.id, { ...window, limit, ...(sessionId !== undefined ? { sessionId } : {}) });
        const stamp = new Date(window.to).toISOString().slice(0, 10);
        return csvStream(`session-traces-${p.id}-${stamp}.csv`, chunks, deps.log);
      },
    },
    {
      method: 'GET',
      path: '/api/projects/{projectId}/sessions/{sessionId}/traces',
      auth: 'principal',
      permission: 'session:read',
      handler: ({ principal, params }) => {
        const p = project(principal.tenantId, params['projectId']!);
        return json({ success: true, data: reader.trace(p.tenantId, p.id, params['sessionId']!) });
      },
    },
    {
      method: 'GET',
      path: '/api/projects/{projectId}/sessions/{sessionId}/traces/{spanId}/children',
      auth: 'principal',
      permission: 'session:read',
      handler: ({ principal, params }) => {
        const p = project(principal.tenantId, params['projectId']!);
        const { span, children } = reader.children(p.tenantId, p.id, params['sessionId']!, params['spanId']!);
        return json({ success: true, data: { span, children } });
      },
    },
    {
      method: 'GET',
      path: '/api/projects/{projectId}/sessions/{sessionId}/analysis',
      auth: 'principal',
      permission: 'session:read',
      handler: ({ principal, params }) => {
        const p = project(principal.tenantId, params['projectId']!);
        return json({ success: true, data: reader.analysis(p.tenantId, p.id, params['sessionId']!) });
      },
    },
  ];
};
