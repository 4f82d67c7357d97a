/**
 * Anthropic messages, streamed: POST {baseUrl}/v1/messages with x-api-key and anthropic-version,
 * read as message_start / content_block_* / message_delta / message_stop events.
 */
import { ParleyError } from '../../runtime/index.js';
import type { ModelCallRequest, ModelCallResult, ModelToolCall } from '../language/model-port.js';
import type { ModelProvider, ProviderConfig } from './provider.js';
import { parseEventData, parseToolArguments, postForStream, quoteProviderMessage, readSse } from './provider-http.js';

/** The API version Parley speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';
/** max_tokens when the provider's settings give none (Anthropic requires the field). */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

type Block = Record<string, unknown>;
interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

/**
 * Our conversation in Anthropic's format: tool results become tool_result blocks of a user
 * message, and consecutive messages of one role merge (the API wants user and assistant to alternate).
 */
export function toAnthropicMessages(req: ModelCallRequest): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const m of req.messages) {
    let role: 'user' | 'assistant';
    const blocks: Block[] = [];
    if (m.role === 'tool') {
      role = 'user';
      blocks.push({ type: 'tool_result', tool_use_id: m.toolCallId ?? '', content: m.content });
    } else if (m.role === 'assistant') {
      role = 'assistant';
      if (m.content !== '') blocks.push({ type: 'text', text: m.content });
      for (const c of m.toolCalls ?? []) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments });
    } else {
      role = 'user';
      blocks.push({ type: 'text', text: m.content });
    }
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out;
}

/** The request body of one streamed message. */
export function anthropicRequestBody(req: ModelCallRequest, cfg: ProviderConfig): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: cfg.model,
    max_tokens: cfg.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    messages: toAnthropicMessages(req),
    stream: true,
  };
  if (req.system !== '') body['system'] = req.system;
  if (cfg.temperature !== undefined) body['temperature'] = cfg.temperature;
  if (req.tools && req.tools.length > 0) {
    body['tools'] = req.tools.map((t) => (t.description === undefined ? { name: t.name, input_schema: t.parameters } : { name: t.name, description: t.description, input_schema: t.parameters }));
  }
  return body;
}

interface OpenBlock {
  type: string;
  id: string;
  name: string;
  json: string;
}

/** The Anthropic provider. */
export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic';

  /** Streams one message; see ModelProvider.complete. */
  async complete(req: ModelCallRequest, cfg: ProviderConfig, signal: AbortSignal): Promise<ModelCallResult> {
    const started = Date.now();
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (cfg.apiKey) headers['x-api-key'] = cfg.apiKey;
    const res = await postForStream(cfg, `${cfg.baseUrl}/v1/messages`, headers, anthropicRequestBody(req, cfg), signal);

    let text = '';
    const blocks = new Map<number, OpenBlock>();
    const toolCalls: ModelToolCall[] = [];
    const usage = { inputTokens: 0, outputTokens: 0 };
    let stopped = false;
    const fail = (message: string): ParleyError => new ParleyError('SERVICE_UNAVAILABLE', `Model provider "${cfg.name}" ${message}`, { provider: cfg.name, model: cfg.model });
    for await (const ev of readSse(cfg, res)) {
      const data = parseEventData(cfg, ev.data);
      const type = typeof data['type'] === 'string' ? data['type'] : ev.event;
      switch (type) {
        case 'message_start': {
          const u = (data['message'] as { usage?: Record<string, number | undefined> } | undefined)?.usage;
          if (u) {
            usage.inputTokens = (u['input_tokens'] ?? 0) + (u['cache_creation_input_tokens'] ?? 0) + (u['cache_read_input_tokens'] ?? 0);
            usage.outputTokens = u['output_tokens'] ?? 0;
          }
          break;
        }
        case 'content_block_start': {
          const b = (data['content_block'] ?? {}) as Record<string, unknown>;
          const block: OpenBlock = { type: String(b['type']), id: String(b['id'] ?? ''), name: String(b['name'] ?? ''), json: '' };
          blocks.set(Number(data['index']), block);
          if (block.type === 'text' && typeof b['text'] === 'string' && b['text'] !== '') {
            text += b['text'];
            req.onText?.(b['text']);
          }
          break;
        }
        case 'content_block_delta': {
          const block = blocks.get(Number(data['index']));
          const delta = (data['delta'] ?? {}) as Record<string, unknown>;
          if (!block) throw fail('sent a delta for a content block it never started');
          if (delta['type'] === 'text_delta' && typeof delta['text'] === 'string') {
            text += delta['text'];
            req.onText?.(delta['text']);
          } else if (delta['type'] === 'input_json_delta' && typeof delta['partial_json'] === 'string') {
            block.json += delta['partial_json'];
          }
          break;
        }
        case 'content_block_stop': {
          const index = Number(data['index']);
          const block = blocks.get(index);
          if (block?.type === 'tool_use') toolCalls.push({ id: block.id, name: block.name, arguments: parseToolArguments(cfg, block.name, block.json) });
          blocks.delete(index);
          break;
        }
        case 'message_delta': {
          const u = data['usage'] as Record<string, number | undefined> | undefined;
          // output_tokens here is cumulative; newer API versions may restate input_tokens too.
          if (u?.['output_tokens'] !== undefined) usage.outputTokens = u['output_tokens'];
          if (u?.['input_tokens'] !== undefined) usage.inputTokens = u['input_tokens'] + (u['cache_creation_input_tokens'] ?? 0) + (u['cache_read_input_tokens'] ?? 0);
          break;
        }
        case 'message_stop':
          stopped = true;
          break;
        case 'error': {
          const e = data['error'] as { type?: unknown; message?: unknown } | undefined;
          const said = typeof e?.message === 'string' ? `: ${quoteProviderMessage(cfg, e.message)}` : '';
          throw fail(`failed mid-stream${typeof e?.type === 'string' ? ` (${e.type})` : ''}${said}`);
        }
        default:
          // ping and event types added after this code was written are ignored, as the API asks.
          break;
      }
      if (stopped) break;
    }
    if (!stopped) throw fail('ended its response before it was complete');
    return { text, toolCalls, usage, costUsd: 0, provider: cfg.name, model: cfg.model, durationMs: Date.now() - started };
  }
}
