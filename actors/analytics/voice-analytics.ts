/** Voice analytics: hourly records and a summary computed from `voice`/`call_ended` events. */
import type { PublicEvent } from './trace-tree.js';
import { isVoiceCallEvent, voiceCallFailed, voiceMetric, type VoiceMetric } from './voice-call-event.js';

/** Default look-back of the voice analytics endpoints, in hours (one week). */
export const DEFAULT_VOICE_HOURS = 168;
/** Longest look-back accepted, in hours (one year). */
export const MAX_VOICE_HOURS = 8760;

/** One hour of voice calls (spec "Voice analytics"). Averages are null when no call of the hour has the metric. */
export interface VoiceHourlyRecord {
  /** Start of the UTC hour, ISO 8601. */
  hour: string;
  session_count: number;
  error_count: number;
  avg_call_duration_ms: number | null;
  avg_inbound_mos: number | null;
  avg_outbound_mos: number | null;
  avg_inbound_jitter_ms: number | null;
  avg_outbound_jitter_ms: number | null;
  avg_e2e_latency_ms: number | null;
  /** Mean over calls with turns of barge_in_count / turn_count. */
  avg_barge_in_rate: number | null;
  /** Mean over calls with turns of dtmf_turn_count / turn_count. */
  avg_dtmf_fallback_rate: number | null;
  avg_asr_score: number | null;
  avg_tts_proxy_mos: number | null;
  avg_silence_percent: number | null;
  total_turns: number;
  total_barge_in_count: number;
  total_dtmf_turn_count: number;
}

/** All calls of the window (spec "Voice analytics"). Averages are null without data; rates are pooled: count / turns. */
export interface VoiceSummary {
  total_calls: number;
  total_errors: number;
  avg_call_duration_ms: number | null;
  overall_avg_inbound_mos: number | null;
  overall_avg_outbound_mos: number | null;
  /** Mean e2e_latency_ms. */
  overall_avg_latency_ms: number | null;
  /** Barge-ins / turns, summed over calls that report both (= total_barge_in_count / total_turns when every call does). */
  overall_barge_in_rate: number | null;
  /** DTMF turns / turns, summed over calls that report both. */
  overall_dtmf_fallback_rate: number | null;
  overall_asr_score: number | null;
  total_turns: number;
  total_barge_in_count: number;
  total_dtmf_turn_count: number;
}

/** A running mean over the values that were present. */
class Mean {
  #sum = 0;
  #count = 0;

  add(value: number | undefined): void {
    if (value === undefined) return;
    this.#sum += value;
    this.#count++;
  }

  get value(): number | null {
    return this.#count === 0 ? null : round(this.#sum / this.#count);
  }
}

/** Six decimals: enough for MOS, rates and milliseconds, and free of float noise like 4.199999999. */
function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

const AVERAGED = ['call_duration_ms', 'inbound_mos', 'outbound_mos', 'inbound_jitter_ms', 'outbound_jitter_ms', 'e2e_latency_ms', 'asr_score', 'tts_proxy_mos', 'silence_percent'] as const;

/** Everything summed or averaged over a set of calls. */
class CallTotals {
  calls = 0;
  errors = 0;
  turns = 0;
  bargeIns = 0;
  dtmfTurns = 0;
  /** Pooled rates use only calls that report both the count and turns: these are their sums. */
  pooledBargeIns = 0;
  turnsWithBargeIns = 0;
  pooledDtmfTurns = 0;
  turnsWithDtmf = 0;
  readonly means = new Map<VoiceMetric, Mean>(AVERAGED.map((m) => [m, new Mean()]));
  readonly bargeInRate = new Mean();
  readonly dtmfRate = new Mean();

  add(event: PublicEvent): void {
    this.calls++;
    if (voiceCallFailed(event)) this.errors++;
    for (const [metric, mean] of this.means) mean.add(voiceMetric(event, metric));
    const turns = count(voiceMetric(event, 'turn_count'));
    const bargeIns = count(voiceMetric(event, 'barge_in_count'));
    const dtmf = count(voiceMetric(event, 'dtmf_turn_count'));
    this.turns += turns ?? 0;
    this.bargeIns += bargeIns ?? 0;
    this.dtmfTurns += dtmf ?? 0;
    if (turns !== undefined && turns > 0) {
      if (bargeIns !== undefined) {
        this.pooledBargeIns += bargeIns;
        this.turnsWithBargeIns += turns;
        this.bargeInRate.add(bargeIns / turns);
      }
      if (dtmf !== undefined) {
        this.pooledDtmfTurns += dtmf;
        this.turnsWithDtmf += turns;
        this.dtmfRate.add(dtmf / turns);
      }
    }
  }

  mean(metric: VoiceMetric): number | null {
    return this.means.get(metric)!.value;
  }
}

/** Counts are non-negative whole numbers; anything else is treated as absent. */
function count(value: number | undefined): number | undefined {
  return value !== undefined && value >= 0 ? Math.floor(value) : undefined;
}

/** Start of the UTC hour of an ISO timestamp; undefined for an unparseable one. */
function hourOf(timestamp: string): string | undefined {
  const ms = Date.parse(timestamp);
  if (!Number.isFinite(ms)) return undefined;
  return new Date(ms - (ms % 3_600_000)).toISOString();
}

/** Accumulates voice call events one at a time (the caller pages through the store), then answers hourly records and the summary. */
export class VoiceAnalytics {
  readonly #hours = new Map<string, CallTotals>();
  readonly #all = new CallTotals();

  /** Adds an event; anything but a voice call_ended event with a valid timestamp is ignored. */
  add(event: PublicEvent): void {
    if (!isVoiceCallEvent(event)) return;
    const hour = hourOf(event.timestamp);
    if (hour === undefined) return;
    let totals = this.#hours.get(hour);
    if (!totals) this.#hours.set(hour, (totals = new CallTotals()));
    totals.add(event);
    this.#all.add(event);
  }

  /** One record per hour that had calls, oldest first. */
  hourly(): VoiceHourlyRecord[] {
    return [...this.#hours.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([hour, t]) => ({
      hour,
      session_count: t.calls,
      error_count: t.errors,
      avg_call_duration_ms: t.mean('call_duration_ms'),
      avg_inbound_mos: t.mean('inbound_mos'),
      avg_outbound_mos: t.mean('outbound_mos'),
      avg_inbound_jitter_ms: t.mean('inbound_jitter_ms'),
      avg_outbound_jitter_ms: t.mean('outbound_jitter_ms'),
      avg_e2e_latency_ms: t.mean('e2e_latency_ms'),
      avg_barge_in_rate: t.bargeInRate.value,
      avg_dtmf_fallback_rate: t.dtmfRate.value,
      avg_asr_score: t.mean('asr_score'),
      avg_tts_proxy_mos: t.mean('tts_proxy_mos'),
      avg_silence_percent: t.mean('silence_percent'),
      total_turns: t.turns,
      total_barge_in_count: t.bargeIns,
      total_dtmf_turn_count: t.dtmfTurns,
    }));
  }

  /** Totals and averages over every call added. */
  summary(): VoiceSummary {
    const t = this.#all;
    return {
      total_calls: t.calls,
      total_errors: t.errors,
      avg_call_duration_ms: t.mean('call_duration_ms'),
      overall_avg_inbound_mos: t.mean('inbound_mos'),
      overall_avg_outbound_mos: t.mean('outbound_mos'),
      overall_avg_latency_ms: t.mean('e2e_latency_ms'),
      overall_barge_in_rate: t.turnsWithBargeIns > 0 ? round(t.pooledBargeIns / t.turnsWithBargeIns) : null,
      overall_dtmf_fallback_rate: t.turnsWithDtmf > 0 ? round(t.pooledDtmfTurns / t.turnsWithDtmf) : null,
      overall_asr_score: t.mean('asr_score'),
      total_turns: t.turns,
      total_barge_in_count: t.bargeIns,
      total_dtmf_turn_count: t.dtmfTurns,
    };
  }
}
