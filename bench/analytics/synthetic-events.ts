import type { EventCategory, NewAnalyticsEvent } from '../../actors/index.js';

// A plausible event mix for the analytics bench: 20 agents, six event kinds, three channels, two
// providers with two models each, 3% errors, durations spread over three orders of magnitude.
const KINDS: [EventCategory, string][] = [['llm', 'llm_call'], ['llm', 'llm_call'], ['tool', 'tool_call'], ['message', 'turn'], ['agent', 'handoff'], ['gather', 'gather_prompt']];
const MODELS = [['openai', 'gpt-4o'], ['openai', 'gpt-4o-mini'], ['anthropic', 'claude-3-5-haiku'], ['anthropic', 'claude-sonnet-4']] as const;
const CHANNELS = ['api', 'web', 'sms'];
const AGENTS = Array.from({ length: 20 }, (_, i) => `agent_${i}`);

/** Event number `i` of a synthetic stream at `timestampMs` (deterministic in i). */
export function syntheticEvent(tenantId: string, projectId: string, i: number, timestampMs: number): NewAnalyticsEvent {
  const [category, event_type] = KINDS[i % KINDS.length]!;
  const h = Math.imul(i, 2654435761) >>> 0;
  const llm = category === 'llm';
  const [provider, model] = MODELS[h % MODELS.length]!;
  return {
    tenantId, projectId, category, event_type,
    agent_name: AGENTS[(h >>> 3) % AGENTS.length]!, session_id: `sess_${(h >>> 5) % 50_000}`, channel: CHANNELS[(h >>> 7) % CHANNELS.length]!,
    timestamp: new Date(timestampMs).toISOString(), duration_ms: 5 + ((h >>> 9) % 1000) * ((h >>> 19) % 5 === 0 ? 20 : 1),
    error: (h >>> 11) % 100 < 3 ? 'upstream timeout' : null, span_id: `sp_${i}`, parent_span_id: llm ? `sp_${i - 1}` : null,
    metadata: llm ? { provider, model, tokens_in: 200 + ((h >>> 13) % 800), tokens_out: 50 + ((h >>> 17) % 300), cost: 0.0001 * (1 + ((h >>> 13) % 50)) } : {},
  };
}
