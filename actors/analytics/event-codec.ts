/**
 * How an event is laid out in LMDB. Events are stored as msgpack arrays (not objects), in blocks
 * (event-blocks.ts): a scan decodes no field names, which keeps range scans lean.
 */
import type { AnalyticsEvent, EventCategory, NewAnalyticsEvent } from './analytics-event.js';

/** An event as the API returns it: without tenantId and projectId. */
export type EventView = Omit<AnalyticsEvent, 'tenantId' | 'projectId'>;

/** The stored value: [id, category, event_type, agent_name, session_id, channel, duration_ms, error, span_id, parent_span_id, metadata]. */
export type StoredEvent = [
  string, EventCategory, string, string | null, string | null, string | null, number | null, string | null, string | null, string | null, Record<string, unknown>,
];

/** Positions in a StoredEvent. */
export const F = { id: 0, category: 1, eventType: 2, agent: 3, session: 4, channel: 5, duration: 6, error: 7, span: 8, parentSpan: 9, metadata: 10 } as const;

/** An event on its way to the store: [tenantId, projectId, timestampMs, stored value]. */
export type EventRow = [string, string, number, StoredEvent];

/** The row of an event (its timestamp parsed); NaN timestamps are the caller's to refuse. */
export function toEventRow(e: AnalyticsEvent): EventRow {
  return [e.tenantId, e.projectId, Date.parse(e.timestamp), storedEventOf(e, e.id)];
}

/** The stored value of a new event under the id it is given. */
export function storedEventOf(e: NewAnalyticsEvent, id: string): StoredEvent {
  // Producers may leave optional fields undefined; msgpack would keep that apart from null.
  return [
    id, e.category, e.event_type, e.agent_name ?? null, e.session_id ?? null, e.channel ?? null, typeof e.duration_ms === 'number' ? e.duration_ms : null,
    e.error ? e.error : null, e.span_id ?? null, e.parent_span_id ?? null, e.metadata ?? {},
  ];
}

/** The API view of a stored event; the timestamp comes from the key (millisecond precision). */
export function decodeEvent(v: StoredEvent, timestampMs: number): EventView {
  return {
    id: v[0], category: v[1], event_type: v[2], agent_name: v[3], session_id: v[4], channel: v[5],
    timestamp: new Date(timestampMs).toISOString(), duration_ms: v[6], error: v[7], span_id: v[8], parent_span_id: v[9], metadata: v[10] ?? {},
  };
}

const ID_TIME_WIDTH = 9;
const COUNTER_SPACE = 36 ** 5;

/** Makes time-ordered event ids: 9 base-36 digits of the timestamp, then a per-generator random part and a counter. */
export class EventIdGenerator {
  readonly #origin = Math.floor(Math.random() * 36 ** 5).toString(36).padStart(5, '0');
  #counter = Math.floor(Math.random() * COUNTER_SPACE);

  /** A new id for an event at `timestampMs`. */
  next(timestampMs: number): string {
    this.#counter = (this.#counter + 1) % COUNTER_SPACE;
    return Math.max(0, Math.floor(timestampMs)).toString(36).padStart(ID_TIME_WIDTH, '0') + this.#origin + this.#counter.toString(36).padStart(5, '0');
  }
}

/** Token count of an event's metadata (tokens_in + tokens_out; missing counts 0). */
export function tokensOf(metadata: Record<string, unknown> | undefined): number {
  if (!metadata) return 0;
  const a = metadata['tokens_in'];
  const b = metadata['tokens_out'];
  return (typeof a === 'number' && Number.isFinite(a) ? a : 0) + (typeof b === 'number' && Number.isFinite(b) ? b : 0);
}

/** The cost in USD carried in an event's metadata (0 when absent). */
export function costOf(metadata: Record<string, unknown> | undefined): number {
  const c = metadata?.['cost'];
  return typeof c === 'number' && Number.isFinite(c) ? c : 0;
}

/** A metadata string field (provider, model), or '' when absent. */
export function metaString(metadata: Record<string, unknown> | undefined, name: string): string {
  const v = metadata?.[name];
  return typeof v === 'string' ? v.slice(0, 200) : '';
}
