import { Type } from '@sinclair/typebox';
import { ParleyError } from '../../runtime/index.js';
import {
  DIMENSIONS, EVENT_CATEGORIES, EventIdGenerator, EventStore, METRICS, RetentionSweeper, sessionMetrics,
  type AnalyticsEvent, type Dimension, type EventCategory, type Metric, type MetricBucket, type Project,
} from '../../actors/index.js';
import type { GatewayDeps, RouteModule } from '../app.js';
import { json, type HttpResult, type RouteContext } from '../http.js';
import type { Route } from '../router.js';
import { compileValidator, intParam } from '../validate.js';

const DAY_MS = 86_400_000;
/** Most events one POST …/analytics/events may carry. */
const MAX_RECORD_BATCH = 1000;
/** How far ahead of the server clock a recorded timestamp may be. */
const MAX_FUTURE_MS = 5 * 60_000;
const MAX_PAGE = 10_000;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

const str = (max: number, min = 0) => Type.String({ minLength: min, maxLength: max });
const nullable = (max: number) => Type.Optional(Type.Union([str(max), Type.Null()]));
const Category = Type.Union(EVENT_CATEGORIES.map((c) => Type.Literal(c)));
const TimeRange = Type.Object({ from: str(64, 1), to: str(64, 1) }, { additionalProperties: false });

const QueryBody = compileValidator(
  Type.Object(
    {
      timeRange: TimeRange,
      category: Type.Optional(Category),
      eventTypes: Type.Optional(Type.Array(str(100, 1), { maxItems: 100 })),
      sessionId: Type.Optional(str(256, 1)),
      agentName: Type.Optional(str(256, 1)),
      hasError: Type.Optional(Type.Boolean()),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE })),
      offset: Type.Optional(Type.Integer({ minimum: 0 })),
    },
    { additionalProperties: false },
  ),
);
const AggregateBody = compileValidator(
  Type.Object(
    {
      timeRange: TimeRange,
      groupBy: Type.Array(Type.Union(DIMENSIONS.map((d) => Type.Literal(d))), { maxItems: DIMENSIONS.length }),
      metrics: Type.Array(Type.Union(METRICS.map((m) => Type.Literal(m))), { minItems: 1, maxItems: METRICS.length }),
      filters: Type.Optional(
        Type.Object(
          {
            category: Type.Optional(Category),
            eventTypes: Type.Optional(Type.Array(str(100, 1), { maxItems: 100 })),
            agentName: Type.Optional(str(256, 1)),
            channel: Type.Optional(str(100, 1)),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
);
const RecordBody = compileValidator(
  Type.Object(
    {
      events: Type.Array(
        Type.Object(
          {
            category: Category,
            event_type: str(100, 1),
            agent_name: nullable(256),
            session_id: nullable(256),
            channel: nullable(100),
            timestamp: Type.Optional(str(64, 1)),
            duration_ms: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 30 * DAY_MS }), Type.Null()])),
            error: nullable(2000),
            span_id: nullable(256),
            parent_span_id: nullable(256),
            metadata: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown())),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: MAX_RECORD_BATCH },
      ),
    },
    { additionalProperties: false },
  ),
);

/** An ISO 8601 time in ms, or VALIDATION_ERROR naming the field. */
function parseTime(raw: string, field: string): number {
  const ms = ISO_8601.test(raw) ? Date.parse(raw) : NaN;
  if (!Number.isFinite(ms)) throw new ParleyError('VALIDATION_ERROR', `${field} must be an ISO 8601 time`, { field });
  return ms;
}

/** [from, to) from query strings or a body, defaulting to the last 24 hours; from must precede to. */
function timeRange(fromRaw: string | null | undefined, toRaw: string | null | undefined, field = ''): { from: number; to: number } {
  const now = Date.now();
  const to = toRaw ? parseTime(toRaw, `${field}to`) : now;
  const from = fromRaw ? parseTime(fromRaw, `${field}from`) : to - DAY_MS;
  if (from >= to) throw new ParleyError('VALIDATION_ERROR', `${field}from must be before ${field}to`, { field: `${field}from` });
  return { from, to };
}

/** A comma list of allowed names (duplicates dropped), or the fallback when absent. */
function listParam<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[], fallback: readonly T[]): T[] {
  const raw = query.get(name);
  if (raw === null || raw.trim() === '') return [...fallback];
  const out: T[] = [];
  for (const item of raw.split(',').map((s) => s.trim())) {
    if (!(allowed as readonly string[]).includes(item)) throw new ParleyError('VALIDATION_ERROR', `${name} must be a comma list of ${allowed.join(', ')} (got "${item.slice(0, 50)}")`, { field: name });
    if (!out.includes(item as T)) out.push(item as T);
  }
  return out;
}

function categoryParam(query: URLSearchParams): EventCategory | undefined {
  const raw = query.get('category');
  if (raw === null || raw === '') return undefined;
  if (!(EVENT_CATEGORIES as readonly string[]).includes(raw)) throw new ParleyError('VALIDATION_ERROR', `category must be one of ${EVENT_CATEGORIES.join(', ')}`, { field: 'category' });
  return raw as EventCategory;
}

function textParam(query: URLSearchParams, name: string): string | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (raw.length > 256) throw new ParleyError('VALIDATION_ERROR', `${name} must be at most 256 characters`, { field: name });
  return raw;
}

function boolParam(query: URLSearchParams, name: string): boolean | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (raw !== 'true' && raw !== 'false') throw new ParleyError('VALIDATION_ERROR', `${name} must be true or false`, { field: name });
  return raw === 'true';
}

const iso = (ms: number): string => new Date(ms).toISOString();
const num = (b: MetricBucket, m: string): number => (b[m] as number | null) ?? 0;

/** Analytics: metrics, events, agent, cost and session aggregates, queries, and recording (docs/analytics.md). */
export const analyticsRoutes: RouteModule = (deps: GatewayDeps) => {
  const events = new EventStore(deps.analytics, { retentionDays: deps.config.analyticsRetentionDays });
  new RetentionSweeper(events).start();
  const ids = new EventIdGenerator();
  const projectOf = (tenantId: string, params: Record<string, string>): Project => deps.tenancy.requireProject(tenantId, params['projectId']!);
  const base = '/api/projects/{projectId}/analytics';
  const metricsOf = (p: Project, from: number, to: number, groupBy: Dimension[], metrics: Metric[], filter = {}) =>
    events.aggregate({ tenantId: p.tenantId, projectId: p.id, from, to, groupBy, metrics, filter });
  // A GET route over a project's events in a time range (from/to query, spec defaults).
  const readRoute = (path: string, handle: (p: Project, from: number, to: number, ctx: RouteContext) => HttpResult): Route => ({
    method: 'GET', path, auth: 'principal', permission: 'session:read', body: 'none',
    handler: (ctx) => {
      const p = projectOf(ctx.principal.tenantId, ctx.params);
      const { from, to } = timeRange(ctx.req.query.get('from'), ctx.req.query.get('to'));
      return handle(p, from, to, ctx);
    },
  });
  return [
    readRoute(`${base}/metrics`, (p, from, to, { req }) => {
      const groupBy = listParam(req.query, 'groupBy', DIMENSIONS, ['category']);
      const metrics = listParam(req.query, 'metrics', METRICS, ['count', 'error_rate']);
      const category = categoryParam(req.query);
      return json({ success: true, data: { groupBy, metrics, buckets: metricsOf(p, from, to, groupBy, metrics, { category }) } });
    }),
    {
      method: 'GET',
      path: `${base}/events`,
      auth: 'principal',
      permission: 'session:read',
      body: 'none',
      handler: ({ principal, params, req }) => {
        const p = projectOf(principal.tenantId, params);
        const q = req.query;
        const { from, to } = timeRange(q.get('from'), q.get('to'));
        const eventTypes = textParam(q, 'eventTypes')?.split(',').map((s) => s.trim()).filter((s) => s !== '');
        const page = events.query({
          tenantId: p.tenantId, projectId: p.id, from, to,
          category: categoryParam(q), eventTypes: eventTypes?.length ? eventTypes : undefined, sessionId: textParam(q, 'sessionId'),
          agentName: textParam(q, 'agentName'), hasError: boolParam(q, 'hasError'),
          limit: intParam(q, 'limit', 100, 1, MAX_PAGE), offset: intParam(q, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
        });
        return json({ success: true, data: page });
      },
    },
    {
      method: 'POST',
      path: `${base}/events`,
      auth: 'principal',
      permission: 'analytics:write',
      handler: async ({ principal, params, body }) => {
        const p = projectOf(principal.tenantId, params);
        const input = RecordBody(body);
        const now = Date.now();
        const oldest = now - events.retentionMs;
        const batch: AnalyticsEvent[] = input.events.map((e, i) => {
          const ts = e.timestamp === undefined ? now : parseTime(e.timestamp, `events.${i}.timestamp`);
          if (ts < oldest || ts > now + MAX_FUTURE_MS) {
            throw new ParleyError('VALIDATION_ERROR', `events.${i}.timestamp must lie within the retention (${deps.config.analyticsRetentionDays} days) and not in the future`, { field: `events.${i}.timestamp` });
          }
          return {
            id: ids.next(ts), tenantId: p.tenantId, projectId: p.id, category: e.category, event_type: e.event_type,
            agent_name: e.agent_name ?? null, session_id: e.session_id ?? null, channel: e.channel ?? null, timestamp: iso(ts),
            duration_ms: e.duration_ms ?? null, error: e.error ?? null, span_id: e.span_id ?? null, parent_span_id: e.parent_span_id ?? null,
            metadata: e.metadata ?? {},
          };
        });
        await events.write(batch);
        return json({ success: true, data: { recorded: batch.length, ids: batch.map((e) => e.id) } }, 201);
      },
    },
    readRoute(`${base}/agents/{name}`, (p, from, to, { params }) => {
      const agentName = params['name']!;
      // Metrics of an agent the project does not have are a 404, like any missing resource.
      if (!deps.agents.get(p.tenantId, p.id, agentName)) throw new ParleyError('NOT_FOUND', 'Agent not found');
      const all: Metric[] = [...METRICS];
      const summary = metricsOf(p, from, to, [], all, { agentName })[0] ?? { count: 0, avg_duration: null, error_rate: 0, p95_duration: null, sum_tokens: 0, sum_cost: 0 };
      return json({
        success: true,
        data: {
          agentName, summary,
          byEventType: metricsOf(p, from, to, ['category', 'event_type'], all, { agentName }),
          byHour: metricsOf(p, from, to, ['hour'], ['count', 'error_rate', 'avg_duration'], { agentName }),
        },
      });
    }),
    readRoute(`${base}/cost-breakdown`, (p, from, to) => {
      const agg = (groupBy: ('provider' | 'model')[]) =>
        events.aggregate({ tenantId: p.tenantId, projectId: p.id, from, to, groupBy, metrics: ['count', 'sum_tokens', 'sum_cost'], filter: { category: 'llm' } })
          .map((b) => ({ ...(b['provider'] !== undefined ? { provider: b['provider'] } : {}), ...(b['model'] !== undefined ? { model: b['model'] } : {}), calls: b['count'], sum_tokens: b['sum_tokens'], sum_cost: b['sum_cost'] }))
          .sort((a, b) => num(b as MetricBucket, 'sum_cost') - num(a as MetricBucket, 'sum_cost'));
      const byModel = agg(['provider', 'model']);
      const byProvider = agg(['provider']);
      const totalCost = Math.round(byProvider.reduce((s, b) => s + (b.sum_cost as number), 0) * 1e8) / 1e8;
      const totalTokens = byProvider.reduce((s, b) => s + (b.sum_tokens as number), 0);
      const calls = byProvider.reduce((s, b) => s + (b.calls as number), 0);
      return json({ success: true, data: { currency: 'USD', totalCost, totalTokens, calls, byModel, byProvider } });
    }),
    readRoute(`${base}/session-metrics`, (p, from, to) => {
      return json({ success: true, data: sessionMetrics(events, p.tenantId, p.id, from, to) });
    }),
    {
      method: 'POST',
      path: `${base}/query`,
      auth: 'principal',
      permission: 'session:read',
      handler: ({ principal, params, body }) => {
        const p = projectOf(principal.tenantId, params);
        const input = QueryBody(body);
        const { from, to } = timeRange(input.timeRange.from, input.timeRange.to, 'timeRange.');
        const page = events.query({
          tenantId: p.tenantId, projectId: p.id, from, to, category: input.category, eventTypes: input.eventTypes?.length ? input.eventTypes : undefined,
          sessionId: input.sessionId, agentName: input.agentName, hasError: input.hasError, limit: input.limit ?? 100, offset: input.offset ?? 0,
        });
        return json({ success: true, data: page });
      },
    },
    {
      method: 'POST',
      path: `${base}/aggregate`,
      auth: 'principal',
      permission: 'session:read',
      handler: ({ principal, params, body }) => {
        const p = projectOf(principal.tenantId, params);
        const input = AggregateBody(body);
        const { from, to } = timeRange(input.timeRange.from, input.timeRange.to, 'timeRange.');
        const groupBy = [...new Set(input.groupBy)];
        const metrics = [...new Set(input.metrics)];
        const f = input.filters ?? {};
        const filter = { category: f.category, eventTypes: f.eventTypes?.length ? f.eventTypes : undefined, agentName: f.agentName, channel: f.channel };
        return json({ success: true, data: { groupBy, metrics, buckets: metricsOf(p, from, to, groupBy, metrics, filter) } });
      },
    },
  ];
};
