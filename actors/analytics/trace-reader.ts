/** Reads session traces, their analysis, model calls across sessions and the CSV export from the event store. */
import { ParleyError } from '../../runtime/index.js';
import { decodeEvent, F } from './event-codec.js';
import type { EventStore } from './event-store.js';
import { analyseTrace, type TraceAnalysis } from './trace-analysis.js';
import { traceCsvHeader, traceCsvRow } from './trace-csv.js';
import { buildSessionTrace, spanChildren, type PublicEvent, type SessionTrace } from './trace-tree.js';

/** Rows read from the store per chunk while exporting (bounds the memory of one export). */
export const EXPORT_CHUNK_ROWS = 500;
/** Default number of rows of one CSV export. */
export const EXPORT_DEFAULT_LIMIT = 10_000;
/** Largest number of rows of one CSV export. */
export const EXPORT_MAX_LIMIT = 100_000;

/** The event store reads traces need. */
export type TraceEventSource = Pick<EventStore, 'query' | 'sessionEvents' | 'scan'>;

/** A time window in epoch ms: from inclusive, to exclusive. */
export interface TimeWindow {
  from: number;
  to: number;
}

/** A page of llm events across sessions, newest first. */
export interface GenerationsPage {
  generations: PublicEvent[];
  total: number;
}

/** Session traces over the event store; `sessionExists` tells a session without events from an unknown one. */
export class TraceReader {
  readonly #events: TraceEventSource;
  readonly #sessionExists: (tenantId: string, projectId: string, sessionId: string) => boolean;

  constructor(events: TraceEventSource, sessionExists: (tenantId: string, projectId: string, sessionId: string) => boolean) {
    this.#events = events;
    this.#sessionExists = sessionExists;
  }

  /** The session's events, or NOT_FOUND when the session neither exists nor has events (the same for another tenant's). */
  #sessionEvents(tenantId: string, projectId: string, sessionId: string): PublicEvent[] {
    const events = this.#events.sessionEvents(tenantId, projectId, sessionId);
    if (events.length === 0 && !this.#sessionExists(tenantId, projectId, sessionId)) throw new ParleyError('NOT_FOUND', 'Session not found');
    return events;
  }

  /** The session's events as a span tree. */
  trace(tenantId: string, projectId: string, sessionId: string): SessionTrace {
    return buildSessionTrace(sessionId, this.#sessionEvents(tenantId, projectId, sessionId));
  }

  /** A span and its direct children; NOT_FOUND when no event of the session has that span id. */
  children(tenantId: string, projectId: string, sessionId: string, spanId: string): { span: PublicEvent; children: PublicEvent[] } {
    const found = spanChildren(this.#sessionEvents(tenantId, projectId, sessionId), spanId);
    if (!found) throw new ParleyError('NOT_FOUND', 'Span not found');
    return found;
  }

  /** Diagnostics of the session's trace. */
  analysis(tenantId: string, projectId: string, sessionId: string): TraceAnalysis {
    return analyseTrace(sessionId, this.#sessionEvents(tenantId, projectId, sessionId));
  }

  /** llm events of the project in the window, newest first, optionally of one session or agent. */
  generations(tenantId: string, projectId: string, q: TimeWindow & { limit: number; offset: number; sessionId?: string; agentName?: string }): GenerationsPage {
    const page = this.#events.query({
      tenantId, projectId, from: q.from, to: q.to, category: 'llm', limit: q.limit, offset: q.offset, order: 'desc',
      ...(q.sessionId !== undefined ? { sessionId: q.sessionId } : {}), ...(q.agentName !== undefined ? { agentName: q.agentName } : {}),
    });
    return { generations: page.events, total: page.total };
  }

  /**
   * The CSV export, lazily, one chunk of at most EXPORT_CHUNK_ROWS rows at a time: the header, then
   * a row per event that belongs to a session, oldest first, at most `limit` rows. Each chunk is a
   * fresh scan resuming after the last row written, so nothing but the current chunk is in memory.
   */
  *exportCsv(tenantId: string, projectId: string, q: TimeWindow & { limit: number; sessionId?: string }): Generator<string> {
    yield traceCsvHeader();
    if (q.sessionId !== undefined) {
      // One session's events come from its index; a session is small enough to read at once.
      const events = this.#events.sessionEvents(tenantId, projectId, q.sessionId);
      let chunk = '';
      let written = 0;
      for (const event of events) {
        const ts = Date.parse(event.timestamp);
        if (ts < q.from || ts >= q.to || written >= q.limit) continue;
        chunk += traceCsvRow(event);
        if (++written % EXPORT_CHUNK_ROWS === 0) {
          yield chunk;
          chunk = '';
        }
      }
      if (chunk !== '') yield chunk;
      return;
    }
    let written = 0;
    let cursor = { ts: q.from, id: '' };
    while (written < q.limit) {
      let chunk = '';
      let rows = 0;
      let more = false;
      this.#events.scan(tenantId, projectId, cursor.ts, q.to, (v, ts) => {
        // Events at the cursor's millisecond up to its id were written by the previous chunk.
        if (ts === cursor.ts && v[F.id] <= cursor.id) return true;
        if (rows >= EXPORT_CHUNK_ROWS || written + rows >= q.limit) {
          more = rows >= EXPORT_CHUNK_ROWS;
          return false;
        }
        cursor = { ts, id: v[F.id] };
        if (v[F.session] === null) return true;
        chunk += traceCsvRow(decodeEvent(v, ts));
        rows++;
        return true;
      });
      written += rows;
      if (chunk !== '') yield chunk;
      if (!more) return;
    }
  }
}
