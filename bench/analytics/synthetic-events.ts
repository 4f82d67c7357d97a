import type { EventCategory, NewAnalyticsEvent } from '../../actors/index.js';

// A plausible event stream for the analytics bench, shaped like real turns: events come six at a
// time, one turn of one session (the turn, two model calls, a tool call, a handoff, a gather
// prompt), as a turn's events do in production. 50,000 sessions, 20 agents, three channels, two
// providers with two models each, 3% errors, durations spread over three orders of magnitude.
const TURN: [EventCategory, string][] = [['message', 'turn'], ['llm', 'llm_call'], ['tool', 'tool_call'], ['llm', 'llm_call'], ['agent', 'handoff'], ['gather', 'gather_prompt']];
const MODELS = [['openai', 'gpt-4o'], ['openai', 'gpt-4o-mini'], ['anthropic', 'claude-3-5-haiku'], ['anthropic', 'claude-sonnet-4']] as const;
const CHANNELS = ['api', 'web', 'sms'];
const AGENTS = Array.from({ length: 20 }, (_, i) => `agent_${i}`);

/** Event number `i` of a synthetic stream at `timestampMs` (deterministic in i). */
export function syntheticEvent(tenantId: string, projectId: string, i: number, timestampMs: number): NewAnalyticsEvent {
  const turn = Math.floor(i / TURN.length);
  const [category, event_type] = TURN[i % TURN.length]!;
  const h = Math.imul(i, 2654435761) >>> 0;
  const session = (Math.imul(turn, 2246822519) >>> 0) % 50_000;
  const llm = category === 'llm';
  const [provider, model] = MODELS[h % MODELS.length]!;
  return {
    tenantId, projectId, category, event_type,
    agent_name: AGENTS[session % AGENTS.length]!, session_id: `sess_${session}`, channel: CHANNELS[session % CHANNELS.length]!,
    timestamp: new Date(timestampMs).toISOString(), duration_ms: 5 + ((h >>> 9) % 1000) * ((h >>> 19) % 5 === 0 ? 20 : 1),
    error: (h >>> 11) % 100 < 3 ? 'upstream timeout' : null, span_id: `sp_${i}`, parent_span_id: category === 'message' ? null : `sp_${turn * TURN.length}`,
    metadata: llm ? { provider, model, tokens_in: 200 + ((h >>> 13) % 800), tokens_out: 50 + ((h >>> 17) % 300), cost: 0.0001 * (1 + ((h >>> 13) % 50)) } : {},
  };
}
