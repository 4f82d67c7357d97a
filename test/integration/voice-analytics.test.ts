import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventIdGenerator, EventStore, voiceCallEndedEvent, type AnalyticsEvent, type VoiceCallMetrics } from '../../actors/index.js';
import { assertError, call, createTenant, startTestServer, type TestServer, type TestTenant } from './harness.js';

const HOUR = 3_600_000;
const ids = new EventIdGenerator();
const NOW_HOUR = Math.floor(Date.now() / HOUR) * HOUR;
const iso = (ms: number): string => new Date(ms).toISOString();
const H1 = NOW_HOUR - 2 * HOUR;
const H2 = NOW_HOUR - HOUR;
const H_OLD = NOW_HOUR - 160 * HOUR;

function callEnded(t: TestTenant, atMs: number, metrics: VoiceCallMetrics, extra: Partial<AnalyticsEvent> = {}): AnalyticsEvent {
  const e = voiceCallEndedEvent({ tenantId: t.tenantId, projectId: t.projectId, sessionId: `voice-${atMs}`, agentName: 'receptionist', channel: 'voice', timestamp: iso(atMs) }, metrics);
  return { ...e, ...extra, id: ids.next(atMs) };
}

const EMPTY_SUMMARY = {
  total_calls: 0, total_errors: 0, avg_call_duration_ms: null, overall_avg_inbound_mos: null, overall_avg_outbound_mos: null, overall_avg_latency_ms: null,
  overall_barge_in_rate: null, overall_dtmf_fallback_rate: null, overall_asr_score: null, total_turns: 0, total_barge_in_count: 0, total_dtmf_turn_count: 0,
};

describe('voice analytics', () => {
  let server: TestServer;
  let a: TestTenant;
  let b: TestTenant;
  let chatKey: string;

  before(async () => {
    server = await startTestServer();
    a = await createTenant(server, 'Voice A');
    b = await createTenant(server, 'Voice B');
    const store = new EventStore(server.parley.deps.analytics, { retentionDays: 30 });
    await store.write([
      callEnded(a, H1 + 10 * 60_000, {
        call_duration_ms: 60_000, inbound_mos: 4.0, outbound_mos: 4.2, inbound_jitter_ms: 10, outbound_jitter_ms: 20, e2e_latency_ms: 800,
        barge_in_count: 2, turn_count: 10, dtmf_turn_count: 1, asr_score: 0.9, tts_proxy_mos: 4.1, silence_percent: 20,
      }),
      callEnded(a, H1 + 20 * 60_000, {
        call_duration_ms: 30_000, inbound_mos: 3.0, outbound_mos: 3.8, inbound_jitter_ms: 30, outbound_jitter_ms: 40, e2e_latency_ms: 1200,
        barge_in_count: 0, turn_count: 5, dtmf_turn_count: 5, asr_score: 0.7, tts_proxy_mos: 3.9, silence_percent: 40, error: 'dropped',
      }),
      // Duration only on the event, an error only on the event, no DTMF figure.
      callEnded(a, H2 + 30 * 60_000, { inbound_mos: 5, turn_count: 4, barge_in_count: 1 }, { duration_ms: 90_000, error: 'asr failure' }),
      callEnded(a, H_OLD + 60_000, { call_duration_ms: 30_000 }),
      // Outside the default week, inside 300 hours.
      callEnded(a, NOW_HOUR - 200 * HOUR, { call_duration_ms: 1000, turn_count: 1, barge_in_count: 0, dtmf_turn_count: 0 }),
      // Not call_ended events: ignored.
      { ...callEnded(a, H1 + 5 * 60_000, { call_duration_ms: 999_999, turn_count: 99 }), event_type: 'call_started' },
      { ...callEnded(a, H1 + 6 * 60_000, { call_duration_ms: 999_999, turn_count: 99 }), category: 'system' },
      callEnded(b, H1 + 10 * 60_000, { call_duration_ms: 5, turn_count: 1 }),
    ]);
    chatKey = (await call(server.base, 'POST', '/api/api-keys', { key: a.key, body: { name: 'chat only', role: 'chat' } })).body.key;
  });

  after(async () => {
    await server?.close();
  });

  const path = (t: TestTenant, rest: string): string => `/api/projects/${t.projectId}/voice-analytics/${rest}`;

  test('hourly: one record per hour with calls, oldest first, with every spec field', async () => {
    const res = await call(server.base, 'GET', path(a, 'hourly'), { key: a.key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    const [old, h1, h2, ...rest] = res.body.data;
    assert.equal(rest.length, 0);
    assert.deepEqual(h1, {
      hour: iso(H1), session_count: 2, error_count: 1, avg_call_duration_ms: 45_000, avg_inbound_mos: 3.5, avg_outbound_mos: 4,
      avg_inbound_jitter_ms: 20, avg_outbound_jitter_ms: 30, avg_e2e_latency_ms: 1000,
      avg_barge_in_rate: 0.1, // mean of 2/10 and 0/5
      avg_dtmf_fallback_rate: 0.55, // mean of 1/10 and 5/5
      avg_asr_score: 0.8, avg_tts_proxy_mos: 4, avg_silence_percent: 30, total_turns: 15, total_barge_in_count: 2, total_dtmf_turn_count: 6,
    });
    assert.deepEqual(h2, {
      hour: iso(H2), session_count: 1, error_count: 1, avg_call_duration_ms: 90_000, avg_inbound_mos: 5, avg_outbound_mos: null,
      avg_inbound_jitter_ms: null, avg_outbound_jitter_ms: null, avg_e2e_latency_ms: null, avg_barge_in_rate: 0.25, avg_dtmf_fallback_rate: null,
      avg_asr_score: null, avg_tts_proxy_mos: null, avg_silence_percent: null, total_turns: 4, total_barge_in_count: 1, total_dtmf_turn_count: 0,
    });
    assert.equal(old.hour, iso(H_OLD));
    assert.equal(old.session_count, 1);
    assert.equal(old.avg_call_duration_ms, 30_000);
    assert.equal(old.avg_barge_in_rate, null);
  });

  test('summary: totals, averages over calls with the metric, pooled rates', async () => {
    const res = await call(server.base, 'GET', path(a, 'summary'), { key: a.key });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, {
      total_calls: 4, total_errors: 2, avg_call_duration_ms: 52_500, overall_avg_inbound_mos: 4, overall_avg_outbound_mos: 4, overall_avg_latency_ms: 1000,
      overall_barge_in_rate: 0.157895, // (2 + 0 + 1) / (10 + 5 + 4)
      overall_dtmf_fallback_rate: 0.4, // (1 + 5) / (10 + 5): the third call reports no DTMF figure
      overall_asr_score: 0.8, total_turns: 19, total_barge_in_count: 3, total_dtmf_turn_count: 6,
    });
  });

  test('hours: default 168, a longer window adds older calls, bad values are 400', async () => {
    const week = await call(server.base, 'GET', path(a, 'summary?hours=168'), { key: a.key });
    const byDefault = await call(server.base, 'GET', path(a, 'summary'), { key: a.key });
    assert.deepEqual(byDefault.body.data, week.body.data);
    const longer = await call(server.base, 'GET', path(a, 'summary?hours=300'), { key: a.key });
    assert.equal(longer.body.data.total_calls, 5);
    assert.equal(longer.body.data.total_turns, 20);
    assert.equal(longer.body.data.overall_barge_in_rate, 0.15);
    assert.equal(longer.body.data.overall_dtmf_fallback_rate, 0.375);
    const hourly = await call(server.base, 'GET', path(a, 'hourly?hours=300'), { key: a.key });
    assert.equal(hourly.body.data.length, 4);
    const short = await call(server.base, 'GET', path(a, 'summary?hours=159'), { key: a.key });
    assert.equal(short.body.data.total_calls, 3, 'the call 160 hours ago is outside 159 hours');
    for (const bad of ['0', '-1', '1.5', 'week', '8761']) {
      assertError(await call(server.base, 'GET', path(a, `hourly?hours=${bad}`), { key: a.key }), 400, 'VALIDATION_ERROR', /hours/);
    }
  });

  test('calls recorded through POST …/analytics/events are counted', async () => {
    const d = await createTenant(server, 'Voice D');
    const at = iso(NOW_HOUR - 3 * HOUR + 60_000);
    const recorded = await call(server.base, 'POST', `/api/projects/${d.projectId}/analytics/events`, {
      key: d.key,
      body: { events: [
        { category: 'voice', event_type: 'call_ended', session_id: 'call-1', channel: 'voice', timestamp: at, duration_ms: 42_000, metadata: { inbound_mos: 4.5, turn_count: 8, barge_in_count: 2, dtmf_turn_count: 2 } },
        { category: 'voice', event_type: 'call_ended', session_id: 'call-2', channel: 'voice', timestamp: at, error: 'no media', metadata: { call_duration_ms: 2000, turn_count: 0 } },
      ] },
    });
    assert.equal(recorded.status, 201, JSON.stringify(recorded.body));
    const summary = await call(server.base, 'GET', path(d, 'summary'), { key: d.key });
    assert.deepEqual(summary.body.data, {
      ...EMPTY_SUMMARY, total_calls: 2, total_errors: 1, avg_call_duration_ms: 22_000, overall_avg_inbound_mos: 4.5,
      overall_barge_in_rate: 0.25, overall_dtmf_fallback_rate: 0.25, total_turns: 8, total_barge_in_count: 2, total_dtmf_turn_count: 2,
    });
    const hourly = await call(server.base, 'GET', path(d, 'hourly'), { key: d.key });
    assert.deepEqual(hourly.body.data.map((r: any) => [r.hour, r.session_count, r.avg_barge_in_rate]), [[iso(NOW_HOUR - 3 * HOUR), 2, 0.25]]);
  });

  test('a project without calls answers an empty list and an empty summary', async () => {
    const c = await createTenant(server, 'Voice C');
    const hourly = await call(server.base, 'GET', path(c, 'hourly'), { key: c.key });
    assert.deepEqual(hourly.body, { success: true, data: [] });
    const summary = await call(server.base, 'GET', path(c, 'summary'), { key: c.key });
    assert.deepEqual(summary.body, { success: true, data: EMPTY_SUMMARY });
  });

  test('tenants see only their calls; another tenant\'s project is 404; session:read is required', async () => {
    const own = await call(server.base, 'GET', path(b, 'summary'), { key: b.key });
    assert.equal(own.body.data.total_calls, 1);
    assert.equal(own.body.data.avg_call_duration_ms, 5);
    for (const rest of ['hourly', 'summary']) {
      assertError(await call(server.base, 'GET', path(a, rest), { key: b.key }), 404, 'NOT_FOUND');
      assertError(await call(server.base, 'GET', path(a, rest), { key: chatKey }), 403, 'FORBIDDEN', /session:read/);
    }
  });
});
