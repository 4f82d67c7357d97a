/** Reads voice call events of a look-back window from the event store into VoiceAnalytics. */
import { decodeEvent, F } from './event-codec.js';
import type { EventStore } from './event-store.js';
import { VoiceAnalytics } from './voice-analytics.js';
import { VOICE_CALL_ENDED } from './voice-call-event.js';

const HOUR_MS = 3_600_000;

/**
 * The calls of the last `hours` hours: events with a timestamp in [now - hours, now]. Only voice
 * call_ended events are decoded; the scan holds one event at a time, the result one entry per hour.
 */
export function readVoiceAnalytics(events: Pick<EventStore, 'scan'>, tenantId: string, projectId: string, hours: number, nowMs = Date.now()): VoiceAnalytics {
  const analytics = new VoiceAnalytics();
  events.scan(tenantId, projectId, nowMs - hours * HOUR_MS, nowMs + 1, (v, ts) => {
    if (v[F.category] === 'voice' && v[F.eventType] === VOICE_CALL_ENDED) analytics.add(decodeEvent(v, ts));
  });
  return analytics;
}
