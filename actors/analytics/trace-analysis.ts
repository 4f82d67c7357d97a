/** Trace diagnostics of one session: slowest span, errors, retries, tokens and cost. */
import { byTime, type PublicEvent } from './trace-tree.js';

/** A short reference to an event in a diagnostic. */
export interface EventRef {
  id: string;
  span_id: string | null;
  parent_span_id: string | null;
  category: string;
  event_type: string;
  agent_name: string | null;
  timestamp: string;
  duration_ms: number | null;
}

/** An error event. */
export interface TraceError extends EventRef {
  error: string;
}

/**
 * Calls of one target inside one turn where a call came right after a failed call of the same target.
 * Target: the tool name for tool calls, provider/model for model calls.
 */
export interface TraceRetry {
  parent_span_id: string;
  category: 'llm' | 'tool';
  target: string;
  /** Calls of the target in that turn. */
  attempts: number;
  /** Of those, calls that failed. */
  failures: number;
  /** Calls whose previous call of the same target failed (the retries). */
  retries: number;
  event_ids: string[];
}

/** Token and cost totals of one provider/model. */
export interface ModelUsage {
  provider: string | null;
  model: string | null;
  calls: number;
  tokens_in: number;
  tokens_out: number;
  cost: number;
}

/** The analysis of a session trace. */
export interface TraceAnalysis {
  sessionId: string;
  eventCount: number;
  spanCount: number;
  turnCount: number;
  modelCallCount: number;
  toolCallCount: number;
  delegationCount: number;
  handoffCount: number;
  /** First to last event: last event's timestamp + its duration minus the first timestamp (0 without events). */
  wallClockMs: number;
  /** Sum of the durations of turn spans. */
  totalTurnDurationMs: number;
  /** The span (event with a span_id, else any event) with the largest duration_ms; null when no event has a duration. */
  slowestSpan: EventRef | null;
  /** The slowest event of each category that has durations. */
  slowestByCategory: Record<string, EventRef>;
  errorCount: number;
  errors: TraceError[];
  retryCount: number;
  retries: TraceRetry[];
  tokens: { input: number; output: number; total: number; cost: number; byModel: ModelUsage[] };
}

function ref(e: PublicEvent): EventRef {
  return {
    id: e.id, span_id: e.span_id, parent_span_id: e.parent_span_id, category: e.category, event_type: e.event_type,
    agent_name: e.agent_name, timestamp: e.timestamp, duration_ms: e.duration_ms,
  };
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The tool an event called: metadata tool_name, tool or name, else the agent name. */
export function toolNameOf(e: PublicEvent): string {
  return str(e.metadata['tool_name']) ?? str(e.metadata['tool']) ?? str(e.metadata['name']) ?? e.agent_name ?? '(unknown tool)';
}

/** True for a model call, a tool call, a delegation and a handoff respectively. */
const isLlm = (e: PublicEvent): boolean => e.category === 'llm';
const isTool = (e: PublicEvent): boolean => e.category === 'tool';
const isTurn = (e: PublicEvent): boolean => e.event_type === 'turn';

/** Analyses a session's events (any order). */
export function analyseTrace(sessionId: string, events: readonly PublicEvent[]): TraceAnalysis {
  const sorted = [...events].sort(byTime);
  const spans = new Set<string>();
  let slowest: PublicEvent | undefined;
  const slowestByCategory: Record<string, EventRef> = {};
  const errors: TraceError[] = [];
  const byModel = new Map<string, ModelUsage>();
  const tokens = { input: 0, output: 0, total: 0, cost: 0 };
  let turnCount = 0;
  let totalTurnDurationMs = 0;
  let end = 0;
  for (const e of sorted) {
    if (e.span_id) spans.add(e.span_id);
    if (isTurn(e)) {
      turnCount++;
      totalTurnDurationMs += num(e.duration_ms);
    }
    if (e.duration_ms !== null) {
      // A spanned event wins a tie or beats an unspanned one: the question is which span is slow.
      if (!slowest || e.duration_ms > (slowest.duration_ms ?? -1) || (e.duration_ms === slowest.duration_ms && e.span_id && !slowest.span_id)) slowest = e;
      const best = slowestByCategory[e.category];
      if (!best || e.duration_ms > (best.duration_ms ?? -1)) slowestByCategory[e.category] = ref(e);
    }
    if (e.error) errors.push({ ...ref(e), error: e.error });
    end = Math.max(end, Date.parse(e.timestamp) + num(e.duration_ms));
    if (isLlm(e)) {
      const provider = str(e.metadata['provider']);
      const model = str(e.metadata['model']);
      const key = `${provider ?? ''}/${model ?? ''}`;
      let usage = byModel.get(key);
      if (!usage) byModel.set(key, (usage = { provider, model, calls: 0, tokens_in: 0, tokens_out: 0, cost: 0 }));
      const tin = num(e.metadata['tokens_in']);
      const tout = num(e.metadata['tokens_out']);
      const cost = num(e.metadata['cost']);
      usage.calls++;
      usage.tokens_in += tin;
      usage.tokens_out += tout;
      usage.cost += cost;
      tokens.input += tin;
      tokens.output += tout;
      tokens.cost += cost;
    }
  }
  tokens.total = tokens.input + tokens.output;
  const retries = findRetries(sorted);
  const start = sorted.length > 0 ? Date.parse(sorted[0]!.timestamp) : 0;
  return {
    sessionId,
    eventCount: sorted.length,
    spanCount: spans.size,
    turnCount,
    modelCallCount: sorted.filter(isLlm).length,
    toolCallCount: sorted.filter(isTool).length,
    delegationCount: sorted.filter((e) => e.category === 'agent' && e.event_type === 'delegate').length,
    handoffCount: sorted.filter((e) => e.category === 'agent' && e.event_type === 'handoff').length,
    wallClockMs: sorted.length > 0 && Number.isFinite(end - start) ? Math.max(0, end - start) : 0,
    totalTurnDurationMs,
    slowestSpan: slowest ? ref(slowest) : null,
    slowestByCategory,
    errorCount: errors.length,
    errors,
    retryCount: retries.reduce((n, r) => n + r.retries, 0),
    retries,
    tokens: { ...tokens, cost: round(tokens.cost), byModel: [...byModel.values()].map((u) => ({ ...u, cost: round(u.cost) })) },
  };
}

/** Costs are sums of small fractions: round away float noise (micro-dollar precision). */
function round(cost: number): number {
  return Math.round(cost * 1e6) / 1e6;
}

/** Groups a turn's tool and model calls by target and counts calls that followed a failure of the same target. */
function findRetries(sorted: readonly PublicEvent[]): TraceRetry[] {
  const groups = new Map<string, { retry: TraceRetry; lastFailed: boolean }>();
  for (const e of sorted) {
    if (!e.parent_span_id || (!isLlm(e) && !isTool(e))) continue;
    const category = isLlm(e) ? 'llm' : 'tool';
    const target = category === 'llm' ? `${str(e.metadata['provider']) ?? ''}/${str(e.metadata['model']) ?? ''}` : toolNameOf(e);
    const key = `${e.parent_span_id}\u0000${category}\u0000${target}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { retry: { parent_span_id: e.parent_span_id, category, target, attempts: 0, failures: 0, retries: 0, event_ids: [] }, lastFailed: false }));
    group.retry.attempts++;
    group.retry.event_ids.push(e.id);
    if (group.lastFailed) group.retry.retries++;
    if (e.error) group.retry.failures++;
    group.lastFailed = e.error !== null && e.error !== '';
  }
  return [...groups.values()].map((g) => g.retry).filter((r) => r.retries > 0);
}
