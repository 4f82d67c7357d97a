/** The spec's 15 analytics categories. */
export const EVENT_CATEGORIES = [
  'session', 'message', 'llm', 'tool', 'agent', 'gather', 'flow', 'channel', 'deployment', 'search', 'voice', 'audit', 'evaluation', 'feedback', 'system',
] as const;

/** One analytics category. */
export type EventCategory = (typeof EVENT_CATEGORIES)[number];

/**
 * One analytics event, as stored and as the API returns it (tenantId/projectId are never
 * returned). Spans: a turn has a span_id; model calls, tool calls and delegations of that turn
 * carry it as parent_span_id, which is how session traces are built.
 */
export interface AnalyticsEvent {
  /** Time-ordered id: sorts by timestamp. */
  id: string;
  tenantId: string;
  projectId: string;
  category: EventCategory;
  /** e.g. llm_call, tool_call, turn, handoff, delegate, gather_prompt, flow_start, deployment_created. */
  event_type: string;
  agent_name: string | null;
  session_id: string | null;
  /** Channel the conversation came through ('api' for the HTTP chat endpoints). */
  channel: string | null;
  /** ISO 8601. */
  timestamp: string;
  duration_ms: number | null;
  /** Present on error events. */
  error: string | null;
  span_id: string | null;
  parent_span_id: string | null;
  /** For llm events: provider, model, tokens_in, tokens_out, cost. */
  metadata: Record<string, unknown>;
}

/** What a producer hands to the recorder (the recorder assigns the id). */
export type NewAnalyticsEvent = Omit<AnalyticsEvent, 'id'>;

/** Where producers send events. Must never block or throw: recording is off the hot path. */
export interface EventSink {
  record(event: NewAnalyticsEvent): void;
}
