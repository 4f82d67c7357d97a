/**
 * OpenAI chat completions, streamed: works with OpenAI and any server that speaks the same API
 * (vLLM, Ollama, LM Studio, OpenRouter, Azure-style gateways...). POST {baseUrl}/chat/completions.
 */
import { ParleyError } from '../../runtime/index.js';
import type { ModelCallRequest, ModelCallResult, ModelMessage, ModelToolCall } from '../language/model-port.js';
import type { ModelProvider, ProviderConfig } from './provider.js';
import { parseEventData, parseToolArguments, postForStream, quoteProviderMessage, readSse } from './provider-http.js';

/** A tool call being assembled from its deltas (keyed by the delta's index). */
interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** Our conversation in OpenAI's message format. */
export function toOpenAiMessages(req: ModelCallRequest): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (req.system !== '') out.push({ role: 'system', content: req.system });
  for (const m of req.messages) out.push(toOpenAiMessage(m));
  return out;
}

function toOpenAiMessage(m: ModelMessage): Record<string, unknown> {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId ?? '', content: m.content };
  if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
    return {
      role: 'assistant',
      content: m.content === '' ? null : m.content,
      tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
    };
  }
  return { role: m.role, content: m.content };
}

/** The request body of one streamed chat completion. */
export function openAiRequestBody(req: ModelCallRequest, cfg: ProviderConfig): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: cfg.model,
    messages: toOpenAiMessages(req),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (cfg.temperature !== undefined) body['temperature'] = cfg.temperature;
  if (cfg.maxTokens !== undefined) body['max_tokens'] = cfg.maxTokens;
  if (req.tools && req.tools.length > 0) {
    body['tools'] = req.tools.map((t) => ({
      type: 'function',
      function: t.description === undefined ? { name: t.name, parameters: t.parameters } : { name: t.name, description: t.description, parameters: t.parameters },
    }));
  }
  return body;
}

/** The OpenAI-compatible provider. */
export class OpenAiProvider implements ModelProvider {
  readonly name = 'openai';

  /** Streams one chat completion; see ModelProvider.complete. */
  async complete(req: ModelCallRequest, cfg: ProviderConfig, signal: AbortSignal): Promise<ModelCallResult> {
    const started = Date.now();
    const headers: Record<string, string> = {};
    if (cfg.apiKey) headers['authorization'] = `Bearer ${cfg.apiKey}`;
    const res = await postForStream(cfg, `${cfg.baseUrl}/chat/completions`, headers, openAiRequestBody(req, cfg), signal);

    let text = '';
    const calls = new Map<number, PartialToolCall>();
    let usage = { inputTokens: 0, outputTokens: 0 };
    let finished = false;
    let done = false;
    for await (const ev of readSse(cfg, res)) {
      if (ev.data === '[DONE]') {
        done = true;
        break;
      }
      const chunk = parseEventData(cfg, ev.data);
      const error = chunk['error'] as { message?: unknown } | undefined;
      if (error) {
        const said = typeof error.message === 'string' ? `: ${quoteProviderMessage(cfg, error.message)}` : '';
        throw new ParleyError('SERVICE_UNAVAILABLE', `Model provider "${cfg.name}" failed mid-stream${said}`, { provider: cfg.name, model: cfg.model });
      }
      const u = chunk['usage'] as { prompt_tokens?: number; completion_tokens?: number } | null | undefined;
      if (u) usage = { inputTokens: u.prompt_tokens ?? 0, outputTokens: u.completion_tokens ?? 0 };
      const choices = (chunk['choices'] as Record<string, unknown>[] | undefined) ?? [];
      const choice = choices.find((c) => (c['index'] ?? 0) === 0);
      if (!choice) continue;
      if (choice['finish_reason']) finished = true;
      const delta = choice['delta'] as { content?: string | null; tool_calls?: Record<string, unknown>[] } | undefined;
      if (!delta) continue;
      if (typeof delta.content === 'string' && delta.content !== '') {
        text += delta.content;
        req.onText?.(delta.content);
      }
      for (const d of delta.tool_calls ?? []) {
        const index = typeof d['index'] === 'number' ? d['index'] : calls.size;
        let call = calls.get(index);
        if (!call) calls.set(index, (call = { id: '', name: '', arguments: '' }));
        const fn = d['function'] as { name?: string; arguments?: string } | undefined;
        if (typeof d['id'] === 'string' && d['id'] !== '') call.id = d['id'];
        if (typeof fn?.name === 'string') call.name += fn.name;
        if (typeof fn?.arguments === 'string') call.arguments += fn.arguments;
      }
    }
    if (!done && !finished) {
      throw new ParleyError('SERVICE_UNAVAILABLE', `Model provider "${cfg.name}" ended its response before it was complete`, { provider: cfg.name, model: cfg.model });
    }
    const toolCalls: ModelToolCall[] = [...calls.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([index, c]) => {
        if (c.name === '') throw new ParleyError('SERVICE_UNAVAILABLE', `Model provider "${cfg.name}" sent a tool call without a name`, { provider: cfg.name, model: cfg.model });
        return { id: c.id || `call_${index}`, name: c.name, arguments: parseToolArguments(cfg, c.name, c.arguments) };
      });
    return { text, toolCalls, usage, costUsd: 0, provider: cfg.name, model: cfg.model, durationMs: Date.now() - started };
  }
}
