import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csvField, csvRow, traceCsvHeader, traceCsvRow, TRACE_CSV_COLUMNS } from '../../actors/analytics/trace-csv.js';
import type { AnalyticsEvent } from '../../actors/analytics/analytics-event.js';
import { parseCsv } from '../fixtures/csv.js';


test('plain fields are written as they are; null and undefined are empty', () => {
  assert.equal(csvField('hello'), 'hello');
  assert.equal(csvField(42), '42');
  assert.equal(csvField(-3.5), '-3.5', 'a negative number stays a number');
  assert.equal(csvField(true), 'true');
  assert.equal(csvField(null), '');
  assert.equal(csvField(undefined), '');
  assert.equal(csvField(Number.NaN), '');
});

test('commas, quotes, CR and LF force quoting and inner quotes are doubled', () => {
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField('line1\nline2'), '"line1\nline2"');
  assert.equal(csvField('a\r\nb'), '"a\r\nb"');
  assert.equal(csvField('"'), '""""');
});

test('cells that start like a formula get a leading single quote', () => {
  assert.equal(csvField('=SUM(A1:A2)'), "'=SUM(A1:A2)");
  assert.equal(csvField('+1'), "'+1");
  assert.equal(csvField('-2+3'), "'-2+3");
  assert.equal(csvField('@cmd'), "'@cmd");
  assert.equal(csvField('\t=x'), "'\t=x");
  assert.equal(csvField('=HYPERLINK("http://x","y")'), `"'=HYPERLINK(""http://x"",""y"")"`, 'defused and quoted');
  assert.equal(csvField('a=b'), 'a=b', 'only the first character matters');
});

test('rows end with CRLF and read back field for field', () => {
  const values = ['x,y', 'he said "no"', 'two\nlines', '=1+1', '', 'plain'];
  const row = csvRow(values);
  assert.ok(row.endsWith('\r\n'));
  assert.deepEqual(parseCsv(row), [['x,y', 'he said "no"', 'two\nlines', "'=1+1", '', 'plain']]);
});

test('an event row has one field per header column; llm fields get columns, metadata stays JSON', () => {
  const event: AnalyticsEvent = {
    id: 'ev1', tenantId: 't', projectId: 'p', category: 'llm', event_type: 'llm_call', agent_name: 'bot', session_id: 's1', channel: 'api',
    timestamp: '2025-01-01T00:00:00.000Z', duration_ms: 120, error: 'rate limited, "retry"', span_id: 'sp2', parent_span_id: 'sp1',
    metadata: { provider: 'openai', model: 'gpt-4o-mini', tokens_in: 10, tokens_out: 5, cost: 0.0001, note: 'a,b' },
  };
  const [header, row] = parseCsv(traceCsvHeader() + traceCsvRow(event));
  assert.deepEqual(header, [...TRACE_CSV_COLUMNS]);
  assert.equal(row!.length, header!.length);
  const byColumn = Object.fromEntries(header!.map((h, i) => [h, row![i]]));
  assert.equal(byColumn['error'], 'rate limited, "retry"');
  assert.equal(byColumn['model'], 'gpt-4o-mini');
  assert.equal(byColumn['tokens_in'], '10');
  assert.equal(byColumn['parent_span_id'], 'sp1');
  assert.deepEqual(JSON.parse(byColumn['metadata']!), event.metadata);
});
