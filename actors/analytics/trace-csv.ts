/** CSV of trace events: RFC 4180 quoting with spreadsheet formula injection defused. */
import type { PublicEvent } from './trace-tree.js';

/** Columns of the session trace export, in order (the header row). */
export const TRACE_CSV_COLUMNS = [
  'id', 'timestamp', 'session_id', 'span_id', 'parent_span_id', 'category', 'event_type', 'agent_name', 'channel',
  'duration_ms', 'error', 'provider', 'model', 'tokens_in', 'tokens_out', 'cost', 'metadata',
] as const;

/** Characters that make a spreadsheet read a cell as a formula when they come first. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field. Text starting with = + - @ (or a tab or carriage return) gets a leading single
 * quote so spreadsheets show it as text instead of running it; numbers are written as they are, so
 * a negative number stays a number. Fields holding a comma, a double quote, CR or LF are quoted,
 * with inner quotes doubled (RFC 4180).
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return String(value);
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record terminated by CRLF, as RFC 4180 writes line breaks. */
export function csvRow(values: readonly unknown[]): string {
  return values.map(csvField).join(',') + '\r\n';
}

/** The header row of the trace export. */
export function traceCsvHeader(): string {
  return csvRow(TRACE_CSV_COLUMNS);
}

/** An event as one row of the trace export; llm fields get their own columns, the rest stays in metadata (JSON). */
export function traceCsvRow(event: PublicEvent): string {
  const m = event.metadata ?? {};
  return csvRow([
    event.id, event.timestamp, event.session_id, event.span_id, event.parent_span_id, event.category, event.event_type, event.agent_name, event.channel,
    event.duration_ms, event.error, m['provider'], m['model'], m['tokens_in'], m['tokens_out'], m['cost'],
    Object.keys(m).length > 0 ? JSON.stringify(m) : '',
  ]);
}
