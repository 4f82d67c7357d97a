// The fake providers are only worth testing against if they are faithful: the official SDKs must
// parse their streams, and read the same text, tool calls and usage as Parley's providers do.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { AnthropicProvider, OpenAiProvider, type ProviderConfig } from '../../actors/models/index.js';
import type { ModelCallRequest } from '../../actors/language/model-port.js';
import type { FakeToolCall, OpenAiReply } from '../fixtures/models/fake-openai-server.js';
import type { AnthropicReply } from '../fixtures/models/fake-anthropic-server.js';
import { useFakeProviders } from '../fixtures/models/fake-providers.js';

const fakes = useFakeProviders();

const weatherCall: FakeToolCall = { id: 'call_w1', name: 'get_weather', argumentChunks: ['{"ci', 'ty": "Par', 'is", "unit"', ': "c"}'] };
const lookupCall: FakeToolCall = { id: 'call_l2', name: 'lookup', argumentChunks: ['{"q":', '"refund"}'] };
const tools = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, { name: 'lookup', parameters: { type: 'object' } }];
const request = (deltas: string[]): ModelCallRequest => ({ model: 'x', system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }], tools, agentName: 'support', onText: (d) => deltas.push(d) });
const config = (kind: 'openai' | 'anthropic', baseUrl: string, model: string): ProviderConfig => ({ name: kind, kind, baseUrl, apiKey: 'k-test', model, temperature: undefined, maxTokens: undefined });

test('OpenAI fake: the SDK and OpenAiProvider read the same streamed text and usage', async () => {
  const script: OpenAiReply = { kind: 'stream', text: ['Hel', 'lo ', 'world'], usage: { prompt_tokens: 21, completion_tokens: 3 } };
  fakes.openai.script(script, script);
  const client = new OpenAI({ baseURL: `${fakes.openai.base}/v1`, apiKey: 'x', maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
  const sdkDeltas: string[] = [];
  let sdkUsage: { prompt_tokens: number; completion_tokens: number } | undefined;
  let finish: string | null | undefined;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    const content = chunk.choices[0]?.delta.content;
    if (content) sdkDeltas.push(content);
    if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
    if (chunk.usage) sdkUsage = chunk.usage;
  }
  assert.deepEqual(sdkDeltas, ['Hel', 'lo ', 'world']);
  assert.equal(finish, 'stop');
  assert.equal(sdkUsage?.prompt_tokens, 21);
  assert.equal(sdkUsage?.completion_tokens, 3);

  const ours: string[] = [];
  const result = await new OpenAiProvider().complete(request(ours), config('openai', `${fakes.openai.base}/v1`, 'gpt-4o-mini'), AbortSignal.timeout(5000));
  assert.deepEqual(ours, sdkDeltas);
  assert.equal(result.text, sdkDeltas.join(''));
  assert.deepEqual(result.usage, { inputTokens: sdkUsage!.prompt_tokens, outputTokens: sdkUsage!.completion_tokens });
  assert.deepEqual(result.toolCalls, []);
});

test('OpenAI fake: the SDK assembles the same tool calls from the deltas as OpenAiProvider', async () => {
  const script: OpenAiReply = { kind: 'stream', toolCalls: [weatherCall, lookupCall], usage: { prompt_tokens: 40, completion_tokens: 17 } };
  fakes.openai.script(script, script);
  const client = new OpenAI({ baseURL: `${fakes.openai.base}/v1`, apiKey: 'x', maxRetries: 0 });
  const runner = client.chat.completions.stream({
    model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'weather?' }], stream_options: { include_usage: true },
    tools: tools.map((t) => ({ type: 'function' as const, function: { name: t.name, parameters: t.parameters } })),
  });
  const completion = await runner.finalChatCompletion();
  const message = completion.choices[0]!.message;
  assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
  const sdkCalls = (message.tool_calls ?? []).map((c) => {
    assert.equal(c.type, 'function');
    const fn = (c as { function: { name: string; arguments: string } }).function;
    return { id: c.id, name: fn.name, arguments: JSON.parse(fn.arguments) as Record<string, unknown> };
  });
  assert.deepEqual(sdkCalls, [
    { id: 'call_w1', name: 'get_weather', arguments: { city: 'Paris', unit: 'c' } },
    { id: 'call_l2', name: 'lookup', arguments: { q: 'refund' } },
  ]);
  assert.equal(completion.usage?.completion_tokens, 17);

  const result = await new OpenAiProvider().complete(request([]), config('openai', `${fakes.openai.base}/v1`, 'gpt-4o-mini'), AbortSignal.timeout(5000));
  assert.deepEqual(result.toolCalls, sdkCalls);
  assert.deepEqual(result.usage, { inputTokens: 40, outputTokens: 17 });
  assert.equal(result.text, '');
});

test('OpenAI fake: the SDK reads an error status as the API error it would get from OpenAI', async () => {
  fakes.openai.script({ kind: 'error', status: 429, message: 'Rate limit reached for gpt-4o-mini', type: 'requests', code: 'rate_limit_exceeded', headers: { 'retry-after': '7' } });
  const client = new OpenAI({ baseURL: `${fakes.openai.base}/v1`, apiKey: 'x', maxRetries: 0 });
  await assert.rejects(
    client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    (err: unknown) => err instanceof OpenAI.RateLimitError && err.status === 429 && err.code === 'rate_limit_exceeded' && /Rate limit reached/.test(err.message),
  );
});

test('Anthropic fake: the SDK and AnthropicProvider read the same text, tool calls and usage', async () => {
  const script: AnthropicReply = { kind: 'stream', text: ['Let me ', 'check', '.'], toolCalls: [weatherCall], usage: { input_tokens: 33, output_tokens: 19 } };
  fakes.anthropic.script(script, script);
  const client = new Anthropic({ baseURL: fakes.anthropic.base, apiKey: 'x', maxRetries: 0 });
  const stream = client.messages.stream({
    model: 'claude-3-5-haiku-latest', max_tokens: 100, messages: [{ role: 'user', content: 'weather?' }],
    tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
  });
  const sdkDeltas: string[] = [];
  stream.on('text', (t) => sdkDeltas.push(t));
  const message = await stream.finalMessage();
  assert.deepEqual(sdkDeltas, ['Let me ', 'check', '.']);
  assert.equal(message.stop_reason, 'tool_use');
  assert.deepEqual(message.usage.input_tokens, 33);
  assert.deepEqual(message.usage.output_tokens, 19);
  const sdkText = message.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
  const sdkCalls = message.content.filter((b) => b.type === 'tool_use').map((b) => {
    const u = b as { id: string; name: string; input: Record<string, unknown> };
    return { id: u.id, name: u.name, arguments: u.input };
  });
  assert.deepEqual(sdkCalls, [{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Paris', unit: 'c' } }]);

  const ours: string[] = [];
  const result = await new AnthropicProvider().complete(request(ours), config('anthropic', fakes.anthropic.base, 'claude-3-5-haiku-latest'), AbortSignal.timeout(5000));
  assert.deepEqual(ours, sdkDeltas);
  assert.equal(result.text, sdkText);
  assert.deepEqual(result.toolCalls, sdkCalls);
  assert.deepEqual(result.usage, { inputTokens: 33, outputTokens: 19 });
});

test('Anthropic fake: the SDK reads an error status and a mid-stream error event as Anthropic errors', async () => {
  const client = new Anthropic({ baseURL: fakes.anthropic.base, apiKey: 'x', maxRetries: 0 });
  fakes.anthropic.script({ kind: 'error', status: 401, type: 'authentication_error', message: 'invalid x-api-key' });
  await assert.rejects(
    client.messages.stream({ model: 'claude-3-5-haiku-latest', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).finalMessage(),
    (err: unknown) => err instanceof Anthropic.AuthenticationError && err.status === 401 && /invalid x-api-key/.test(err.message),
  );
  fakes.anthropic.script({ kind: 'stream-error', text: ['Hi'], type: 'overloaded_error', message: 'Overloaded' });
  await assert.rejects(
    client.messages.stream({ model: 'claude-3-5-haiku-latest', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).finalMessage(),
    (err: unknown) => err instanceof Anthropic.APIError && /Overloaded/.test(err.message),
  );
});
