/** The voice call event: one per finished call, the input of voice analytics. */
import type { NewAnalyticsEvent } from './analytics-event.js';
import type { PublicEvent } from './trace-tree.js';

/** event_type of the event a voice channel records when a call ends. */
export const VOICE_CALL_ENDED = 'call_ended';

/** Quality and usage figures of one call (metadata of a `voice`/`call_ended` event); every field is optional. */
export interface VoiceCallMetrics {
  call_duration_ms?: number;
  /** Mean Opinion Score 1..5 of the audio received from the caller. */
  inbound_mos?: number;
  /** Mean Opinion Score 1..5 of the audio sent to the caller. */
  outbound_mos?: number;
  inbound_jitter_ms?: number;
  outbound_jitter_ms?: number;
  /** Caller stops speaking → first audio of the answer. */
  e2e_latency_ms?: number;
  /** Times the caller interrupted the agent. */
  barge_in_count?: number;
  /** Conversation turns of the call. */
  turn_count?: number;
  /** Turns answered with keypad (DTMF) input instead of speech. */
  dtmf_turn_count?: number;
  /** Speech recognition confidence 0..1, averaged over the call. */
  asr_score?: number;
  /** Estimated MOS 1..5 of the synthesized speech. */
  tts_proxy_mos?: number;
  /** Share of the call that was silence, 0..100. */
  silence_percent?: number;
  /** Why the call failed, when it did. */
  error?: string;
}

/** The numeric metric names of a call. */
export const VOICE_METRICS = [
  'call_duration_ms', 'inbound_mos', 'outbound_mos', 'inbound_jitter_ms', 'outbound_jitter_ms', 'e2e_latency_ms',
  'barge_in_count', 'turn_count', 'dtmf_turn_count', 'asr_score', 'tts_proxy_mos', 'silence_percent',
] as const;

/** One numeric metric name. */
export type VoiceMetric = (typeof VOICE_METRICS)[number];

/** True for a voice call event. */
export function isVoiceCallEvent(event: PublicEvent): boolean {
  return event.category === 'voice' && event.event_type === VOICE_CALL_ENDED;
}

/** A metric of a call event; undefined when absent or not a finite number. call_duration_ms falls back to the event's duration_ms. */
export function voiceMetric(event: PublicEvent, name: VoiceMetric): number | undefined {
  const value = event.metadata[name];
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (name === 'call_duration_ms' && event.duration_ms !== null && Number.isFinite(event.duration_ms)) return event.duration_ms;
  return undefined;
}

/** True when the call failed: the event's error or metadata.error is a non-empty string. */
export function voiceCallFailed(event: PublicEvent): boolean {
  const inner = event.metadata['error'];
  return (typeof event.error === 'string' && event.error !== '') || (typeof inner === 'string' && inner !== '');
}

/** Builds the event a voice channel records when a call ends (the recorder assigns the id). */
export function voiceCallEndedEvent(base: { tenantId: string; projectId: string; sessionId: string | null; agentName: string | null; channel: string | null; timestamp: string }, metrics: VoiceCallMetrics): NewAnalyticsEvent {
  return {
    tenantId: base.tenantId, projectId: base.projectId, category: 'voice', event_type: VOICE_CALL_ENDED,
    agent_name: base.agentName, session_id: base.sessionId, channel: base.channel, timestamp: base.timestamp,
    duration_ms: metrics.call_duration_ms ?? null, error: metrics.error ?? null, span_id: null, parent_span_id: null,
    metadata: { ...metrics },
  };
}
