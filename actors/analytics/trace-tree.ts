/** Session traces: a session's events arranged as a tree of spans (turn → model call / tool call / delegate). */
import type { AnalyticsEvent } from './analytics-event.js';

/** An event as the API returns it (tenantId and projectId are never returned); the trace functions take either form. */
export type PublicEvent = Omit<AnalyticsEvent, 'tenantId' | 'projectId'>;

/** One node of a session trace: the event and the nodes whose parent_span_id is its span_id. */
export interface TraceNode extends PublicEvent {
  children: TraceNode[];
}

/** A session's trace. */
export interface SessionTrace {
  sessionId: string;
  eventCount: number;
  /** Events with a span_id. */
  spanCount: number;
  /** Top-level nodes in time order: events without a parent, and orphans whose parent span is not among the session's events. */
  roots: TraceNode[];
  /** parent_span_id values that name no span of the session (their events appear as roots). */
  orphanParents: string[];
}

/** The event without tenant and project ids. */
export function publicEvent(event: PublicEvent): PublicEvent {
  const { tenantId: _t, projectId: _p, ...rest } = event as PublicEvent & { tenantId?: string; projectId?: string };
  return rest;
}

/** Time order, then id order (ids are time-ordered, so this is stable for equal timestamps). */
export function byTime(a: PublicEvent, b: PublicEvent): number {
  return a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Builds the tree. When two events share a span_id (a producer's mistake), children attach to the
 * first one; a parent cycle cannot form because a node is only attached under a span seen as a
 * different event, and each event is attached once.
 */
export function buildSessionTrace(sessionId: string, events: readonly PublicEvent[]): SessionTrace {
  const sorted = [...events].sort(byTime);
  const nodes = sorted.map((e): TraceNode => ({ ...publicEvent(e), children: [] }));
  const bySpan = new Map<string, TraceNode>();
  for (const node of nodes) if (node.span_id && !bySpan.has(node.span_id)) bySpan.set(node.span_id, node);
  const roots: TraceNode[] = [];
  const orphanParents = new Set<string>();
  for (const node of nodes) {
    const parent = node.parent_span_id ? bySpan.get(node.parent_span_id) : undefined;
    if (parent && parent !== node && !isAncestor(node, parent)) parent.children.push(node);
    else {
      if (node.parent_span_id && !parent) orphanParents.add(node.parent_span_id);
      roots.push(node);
    }
  }
  return { sessionId, eventCount: nodes.length, spanCount: bySpan.size, roots, orphanParents: [...orphanParents] };
}

/** True when `node` is already above `candidate` (attaching would make a cycle). */
function isAncestor(node: TraceNode, candidate: TraceNode): boolean {
  const stack = [...node.children];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (next === candidate) return true;
    stack.push(...next.children);
  }
  return false;
}

/** The span's own event and its direct children (time order); undefined when no event of the session has that span_id. */
export function spanChildren(events: readonly PublicEvent[], spanId: string): { span: PublicEvent; children: PublicEvent[] } | undefined {
  const sorted = [...events].sort(byTime);
  const span = sorted.find((e) => e.span_id === spanId);
  if (!span) return undefined;
  return { span: publicEvent(span), children: sorted.filter((e) => e.parent_span_id === spanId && e !== span).map(publicEvent) };
}
