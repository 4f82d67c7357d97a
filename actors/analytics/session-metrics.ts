/** Session-level aggregates over a time range (GET …/analytics/session-metrics; docs/analytics.md). */
import { costOf, F, tokensOf } from './event-codec.js';
import type { EventStore } from './event-store.js';

/** Aggregates of the sessions that have events in a range (only their events inside it count). */
export interface SessionMetrics {
  sessions: number;
  events: number;
  /** Events of type 'turn'. */
  turns: number;
  /** Events of type 'handoff'. */
  handoffs: number;
  /** Sessions with at least one error event. */
  sessionsWithErrors: number;
  /** sessionsWithErrors / sessions (0..1). */
  errorSessionRate: number;
  avgEventsPerSession: number;
  avgTurnsPerSession: number;
  /** Mean time from a session's first to its last event in the range, in ms. */
  avgSessionDurationMs: number;
  avgTokensPerSession: number;
  avgCostPerSession: number;
  totalTokens: number;
  totalCost: number;
  /** Sessions per channel of their first event. */
  byChannel: Record<string, number>;
}

interface Acc {
  first: number;
  last: number;
  events: number;
  turns: number;
  handoffs: number;
  error: boolean;
  tokens: number;
  cost: number;
  channel: string;
}

/** One pass over the range's events, grouped by session id (events without one are skipped). */
export function sessionMetrics(store: EventStore, tenantId: string, projectId: string, from: number, to: number): SessionMetrics {
  const sessions = new Map<string, Acc>();
  store.scan(tenantId, projectId, from, to, (v, ts) => {
    const id = v[F.session];
    if (!id) return;
    let s = sessions.get(id);
    if (!s) sessions.set(id, (s = { first: ts, last: ts, events: 0, turns: 0, handoffs: 0, error: false, tokens: 0, cost: 0, channel: v[F.channel] ?? 'unknown' }));
    s.last = ts;
    s.events++;
    if (v[F.eventType] === 'turn') s.turns++;
    if (v[F.eventType] === 'handoff') s.handoffs++;
    if (v[F.error] !== null) s.error = true;
    s.tokens += tokensOf(v[F.metadata]);
    s.cost += costOf(v[F.metadata]);
  });
  const n = sessions.size;
  let events = 0, turns = 0, handoffs = 0, withErrors = 0, duration = 0, tokens = 0, cost = 0;
  const byChannel: Record<string, number> = {};
  for (const s of sessions.values()) {
    events += s.events;
    turns += s.turns;
    handoffs += s.handoffs;
    if (s.error) withErrors++;
    duration += s.last - s.first;
    tokens += s.tokens;
    cost += s.cost;
    byChannel[s.channel] = (byChannel[s.channel] ?? 0) + 1;
  }
  const avg = (x: number, digits = 2): number => (n === 0 ? 0 : Math.round((x / n) * 10 ** digits) / 10 ** digits);
  return {
    sessions: n, events, turns, handoffs, sessionsWithErrors: withErrors, errorSessionRate: avg(withErrors, 6),
    avgEventsPerSession: avg(events), avgTurnsPerSession: avg(turns), avgSessionDurationMs: avg(duration),
    avgTokensPerSession: avg(tokens), avgCostPerSession: avg(cost, 8), totalTokens: tokens, totalCost: Math.round(cost * 1e8) / 1e8, byChannel,
  };
}
