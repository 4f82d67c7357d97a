import type { NewAnalyticsEvent } from '../analytics/analytics-event.js';
import type { TurnResult } from '../language/index.js';
import type { SessionRecord } from './session-records.js';

/**
 * The analytics events of a finished turn (or resumed continuation): the turn span itself, the
 * session start, its flow and gather steps, and its handoffs. Model, tool and delegate calls are recorded as they happen
 * (turn-host.ts) under the same span.
 */
export function turnEvents(session: SessionRecord, spanId: string, startedAt: Date, durationMs: number, result: TurnResult, isNew: boolean, kind: 'turn' | 'resume' = 'turn'): NewAnalyticsEvent[] {
  const base = { tenantId: session.tenantId, projectId: session.projectId, session_id: session.id, channel: 'api', error: null } as const;
  const at = startedAt.toISOString();
  const events: NewAnalyticsEvent[] = [];
  if (isNew) {
    events.push({ ...base, category: 'session', event_type: 'session_started', agent_name: session.entryAgent, timestamp: at, duration_ms: null, span_id: null, parent_span_id: null, metadata: { deploymentId: session.deploymentId ?? null } });
  }
  events.push({
    ...base, category: 'message', event_type: kind, agent_name: result.agentName, timestamp: at, duration_ms: Math.round(durationMs),
    span_id: spanId, parent_span_id: null,
    metadata: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, suspended: result.suspended, modelCalls: result.modelCalls.length },
  });
  for (const step of result.steps) {
    // Tool calls are recorded as they happen (turn-host.ts), with their own span.
    if (step.kind === 'tool_call') continue;
    const category = step.kind.startsWith('gather') ? 'gather' : 'flow';
    events.push({
      ...base, category, event_type: step.kind, agent_name: step.agent, timestamp: step.at, duration_ms: step.duration_ms ?? null,
      error: step.error ?? null, span_id: null, parent_span_id: spanId, metadata: { ...(step.flow ? { flow: step.flow } : {}), ...(step.slot ? { slot: step.slot } : {}) },
    });
  }
  for (const t of result.traceEvents) {
    if (t.type !== 'handoff') continue;
    events.push({ ...base, category: 'agent', event_type: 'handoff', agent_name: String(t.data['fromAgent'] ?? result.agentName), timestamp: String(t.data['timestamp'] ?? at), duration_ms: null, span_id: null, parent_span_id: spanId, metadata: { ...t.data } });
  }
  return events;
}
