// The OpenAI-compatible and Anthropic providers against fake servers speaking the real wire formats.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnthropicProvider, ModelRouter, OpenAiProvider, PriceTable, type ModelSettingsSource, type ProviderConfig, type ResolvedProvider } from '../../actors/models/index.js';
import type { ModelCallRequest } from '../../actors/language/model-port.js';
import { useFakeProviders } from '../fixtures/models/fake-providers.js';

const KEY = 'sk-test-SECRET-0123456789abcdef';
const fakes = useFakeProviders();

const conversation: ModelCallRequest['messages'] = [
  { role: 'user', content: 'What is the weather in Paris?' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
  { role: 'tool', toolCallId: 'call_1', content: '{"temp":21}' },
  { role: 'assistant', content: 'It is 21 degrees.' },
  { role: 'user', content: 'Thanks' },
];
const tools = [{ name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
const cfg = (kind: 'openai' | 'anthropic', model: string, extra: Partial<ProviderConfig> = {}): ProviderConfig => ({
  name: kind, kind, baseUrl: kind === 'openai' ? `${fakes.openai.base}/v1` : fakes.anthropic.base, apiKey: KEY, model, temperature: undefined, maxTokens: undefined, ...extra,
});
const signal = (): AbortSignal => AbortSignal.timeout(5000);

/** A ModelRouter over one provider named like its kind, for error mapping through the real path. */
function routerFor(kind: 'openai' | 'anthropic'): ModelRouter {
  const provider: ResolvedProvider = {
    name: kind, kind, baseUrl: kind === 'openai' ? `${fakes.openai.base}/v1` : fakes.anthropic.base, apiKey: KEY,
    defaultModel: undefined, maxTokens: undefined, timeouts: { totalMs: 5000, firstByteMs: 5000 },
  };
  const settings: ModelSettingsSource = { resolveProvider: (_t, _p, name) => (name === kind ? provider : undefined) };
  return new ModelRouter({ settings, prices: new PriceTable({}) });
}
const ctx = { tenantId: 't1', projectId: 'p1' };

test('OpenAI: text deltas stream in order and concatenate to the text', async () => {
  fakes.openai.script({ kind: 'stream', text: ['The ', 'answer', ' is', ' 42.'], usage: { prompt_tokens: 50, completion_tokens: 5 } });
  const deltas: string[] = [];
  const result = await new OpenAiProvider().complete({ model: 'openai/gpt-4o-mini', system: 'Be brief.', messages: [{ role: 'user', content: 'Q?' }], agentName: 'a', onText: (d) => deltas.push(d) }, cfg('openai', 'gpt-4o-mini'), signal());
  assert.deepEqual(deltas, ['The ', 'answer', ' is', ' 42.']);
  assert.equal(result.text, 'The answer is 42.');
  assert.deepEqual(result.usage, { inputTokens: 50, outputTokens: 5 });
  assert.equal(result.model, 'gpt-4o-mini');
});

test('OpenAI: the request carries the key, stream options, system, tool calls and tool results in OpenAI form', async () => {
  fakes.openai.script({ kind: 'stream', text: ['ok'] });
  await new OpenAiProvider().complete({ model: 'openai/gpt-4o', system: 'You are Ada.', messages: conversation, tools, agentName: 'a' }, cfg('openai', 'gpt-4o', { temperature: 0.3, maxTokens: 99 }), signal());
  const req = fakes.openai.requests.at(-1)!;
  assert.equal(req.path, '/v1/chat/completions');
  assert.equal(req.headers['authorization'], `Bearer ${KEY}`);
  assert.equal(req.body.model, 'gpt-4o');
  assert.equal(req.body.stream, true);
  assert.deepEqual(req.body.stream_options, { include_usage: true });
  assert.equal(req.body.temperature, 0.3);
  assert.equal(req.body.max_tokens, 99);
  assert.deepEqual(req.body.messages, [
    { role: 'system', content: 'You are Ada.' },
    { role: 'user', content: 'What is the weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
    { role: 'assistant', content: 'It is 21 degrees.' },
    { role: 'user', content: 'Thanks' },
  ]);
  assert.deepEqual(req.body.tools, [{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: tools[0]!.parameters } }]);
});

test('OpenAI: a tool call split across several deltas is assembled, arguments parsed', async () => {
  fakes.openai.script({ kind: 'stream', text: ['Checking.'], toolCalls: [{ id: 'call_9', name: 'get_weather', argumentChunks: ['{"', 'city', '":"Ly', 'on"}'] }], usage: { prompt_tokens: 7, completion_tokens: 9 } });
  const result = await new OpenAiProvider().complete({ model: 'm', system: '', messages: [{ role: 'user', content: 'w' }], tools, agentName: 'a' }, cfg('openai', 'gpt-4o-mini'), signal());
  assert.equal(result.text, 'Checking.');
  assert.deepEqual(result.toolCalls, [{ id: 'call_9', name: 'get_weather', arguments: { city: 'Lyon' } }]);
  assert.equal(fakes.openai.requests.at(-1)!.body.messages[0].role, 'user', 'an empty system prompt is not sent');
});

test('OpenAI: tool arguments that are not JSON are a clear error naming the tool', async () => {
  fakes.openai.script({ kind: 'stream', toolCalls: [{ id: 'c', name: 'get_weather', argumentChunks: ['{"city": "Par'] }] });
  await assert.rejects(
    new OpenAiProvider().complete({ model: 'm', system: '', messages: [{ role: 'user', content: 'w' }], agentName: 'a' }, cfg('openai', 'gpt-4o-mini'), signal()),
    (err: any) => err.code === 'SERVICE_UNAVAILABLE' && /tool "get_weather" with arguments that are not valid JSON/.test(err.message),
  );
});

test('OpenAI: a stream cut before finish_reason or [DONE] is an error, not a silent partial answer', async () => {
  const chunk = (delta: object): string => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] })}\n\n`;
  fakes.openai.script({ kind: 'raw', blocks: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Half' })] });
  await assert.rejects(
    new OpenAiProvider().complete({ model: 'm', system: '', messages: [{ role: 'user', content: 'w' }], agentName: 'a' }, cfg('openai', 'gpt-4o-mini'), signal()),
    (err: any) => err.code === 'SERVICE_UNAVAILABLE' && /ended its response before it was complete/.test(err.message),
  );
});

test('OpenAI: 401 is a BAD_REQUEST about the key that never contains the key', async () => {
  fakes.openai.script({ kind: 'error', status: 401, message: `Incorrect API key provided: ${KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`, code: 'invalid_api_key' });
  const events: any[] = [];
  await assert.rejects(routerFor('openai').complete({ model: 'openai/gpt-4o-mini', system: '', messages: [{ role: 'user', content: 'hi' }], agentName: 'a' }, { ...ctx, onEvent: (e) => events.push(e) }), (err: any) => {
    assert.equal(err.code, 'BAD_REQUEST');
    assert.match(err.message, /rejected the API key \(HTTP 401\)/);
    assert.ok(!JSON.stringify({ m: err.message, d: err.details }).includes('SECRET'), 'no part of the key in the error');
    return true;
  });
  assert.equal(events.length, 1);
  assert.ok(!JSON.stringify(events[0]).includes('SECRET'), 'no part of the key in the event');
});

test('OpenAI: 429 is SERVICE_UNAVAILABLE with retryAfterMs from Retry-After; a quoted message loses partial keys', async () => {
  fakes.openai.script({ kind: 'error', status: 429, message: 'Rate limit reached for key sk-proj-abc***wxyz', type: 'requests', code: 'rate_limit_exceeded', headers: { 'retry-after': '20' } });
  await assert.rejects(routerFor('openai').complete({ model: 'openai/gpt-4o-mini', system: '', messages: [{ role: 'user', content: 'hi' }], agentName: 'a' }, ctx), (err: any) => {
    assert.equal(err.code, 'SERVICE_UNAVAILABLE');
    assert.match(err.message, /rate limiting this project \(HTTP 429\); retry after 20 s/);
    assert.equal(err.details.retryAfterMs, 20_000);
    return true;
  });
  fakes.openai.script({ kind: 'error', status: 400, message: 'Bad thing near sk-proj-abc***wxyz', code: null });
  await assert.rejects(routerFor('openai').complete({ model: 'openai/gpt-4o-mini', system: '', messages: [{ role: 'user', content: 'hi' }], agentName: 'a' }, ctx), (err: any) => {
    assert.equal(err.code, 'BAD_REQUEST');
    assert.match(err.message, /refused the request \(HTTP 400\): Bad thing near \[redacted\]/);
    return true;
  });
});

test('OpenAI: 500 and 404 map to an outage and a misconfiguration', async () => {
  fakes.openai.script({ kind: 'error', status: 500, message: 'The server had an error while processing your request.', type: 'server_error' });
  await assert.rejects(routerFor('openai').complete({ model: 'openai/gpt-4o-mini', system: '', messages: [{ role: 'user', content: 'hi' }], agentName: 'a' }, ctx),
    (err: any) => err.code === 'SERVICE_UNAVAILABLE' && /failed \(HTTP 500\): The server had an error/.test(err.message) && err.details.status === 500);
  fakes.openai.script({ kind: 'error', status: 404, message: 'The model `gpt-9` does not exist or you do not have access to it.', code: 'model_not_found' });
  await assert.rejects(routerFor('openai').complete({ model: 'openai/gpt-9', system: '', messages: [{ role: 'user', content: 'hi' }], agentName: 'a' }, ctx),
    (err: any) => err.code === 'BAD_REQUEST' && /does not know model "gpt-9"/.test(err.message));
});

test('OpenAI: an {error} chunk mid-stream fails the call', async () => {
  fakes.openai.script({ kind: 'stream-error', text: ['Par'], message: 'The server had an error processing your request.' });
  const deltas: string[] = [];
  await assert.rejects(new OpenAiProvider().complete({ model: 'm', system: '', messages: [{ role: 'user', content: 'w' }], agentName: 'a', onText: (d) => deltas.push(d) }, cfg('openai', 'gpt-4o-mini'), signal()),
    (err: any) => err.code === 'SERVICE_UNAVAILABLE' && /failed mid-stream: The server had an error/.test(err.message));
  assert.deepEqual(deltas, ['Par']);
});

test('Anthropic: text deltas stream in order; usage comes from message_start and message_delta', async () => {
  fakes.anthropic.script({ kind: 'stream', text: ['Bon', 'jour', ' !'], usage: { input_tokens: 31, output_tokens: 8 } });
  const deltas: string[] = [];
  const result = await new AnthropicProvider().complete({ model: 'anthropic/claude-3-5-haiku', system: 'x', messages: [{ role: 'user', content: 'salut' }], agentName: 'a', onText: (d) => deltas.push(d) }, cfg('anthropic', 'claude-3-5-haiku-latest'), signal());
  assert.deepEqual(deltas, ['Bon', 'jour', ' !']);
  assert.equal(result.text, 'Bonjour !');
  assert.deepEqual(result.usage, { inputTokens: 31, outputTokens: 8 });
  assert.deepEqual(result.toolCalls, []);
});

test('Anthropic: the request has x-api-key, version 2023-06-01, system on top, tool results as user tool_result blocks', async () => {
  fakes.anthropic.script({ kind: 'stream', text: ['ok'] });
  await new AnthropicProvider().complete({ model: 'anthropic/claude-sonnet-4', system: 'You are Ada.', messages: conversation, tools, agentName: 'a' }, cfg('anthropic', 'claude-sonnet-4', { temperature: 0.2 }), signal());
  const req = fakes.anthropic.requests.at(-1)!;
  assert.equal(req.path, '/v1/messages');
  assert.equal(req.headers['x-api-key'], KEY);
  assert.equal(req.headers['anthropic-version'], '2023-06-01');
  assert.equal(req.headers['authorization'], undefined);
  assert.equal(req.body.system, 'You are Ada.');
  assert.equal(req.body.stream, true);
  assert.equal(req.body.temperature, 0.2);
  assert.equal(req.body.max_tokens, 4096);
  assert.deepEqual(req.body.messages, [
    { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '{"temp":21}' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'It is 21 degrees.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
  ]);
  assert.deepEqual(req.body.tools, [{ name: 'get_weather', description: 'Weather of a city', input_schema: tools[0]!.parameters }]);
});

test('Anthropic: tool_use blocks are assembled from input_json_delta fragments, after streamed text', async () => {
  fakes.anthropic.script({
    kind: 'stream', text: ['One moment.'], usage: { input_tokens: 5, output_tokens: 30 },
    toolCalls: [{ id: 'toolu_1', name: 'get_weather', argumentChunks: ['{"city"', ': "Ni', 'ce"}'] }, { id: 'toolu_2', name: 'now', argumentChunks: [] }],
  });
  const result = await new AnthropicProvider().complete({ model: 'm', system: '', messages: [{ role: 'user', content: 'w' }], tools, agentName: 'a' }, cfg('anthropic', 'claude-3-5-haiku'), signal());
  assert.equal(result.text, 'One moment.');
  assert.deepEqual(result.toolCalls, [{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Nice' } }, { id: 'toolu_2', name: 'now', arguments: {} }]);
  assert.equal(fakes.anthropic.requests.at(-1)!.body.system, undefined, 'an empty system prompt is not sent');
});

test('Anthropic: an error event mid-stream (overloaded) and HTTP errors map to clear errors', async () => {
  fakes.anthropic.script({ kind: 'stream-error', text: ['Hel'], type: 'overloaded_error', message: 'Overloaded' });
  await assert.rejects(routerFor('anthropic').complete({ model: 'anthropic/claude-3-5-haiku', system: '', messages: [{ role: 'user', content: 'hi' }], agentName: 'a' }, ctx),
    (err: any) => err.code === 'SERVICE_UNAVAILABLE' && /failed mid-stream \(overloaded_error\): Overloaded/.test(err.message));
  fakes.anthropic.script({ kind: 'error', status: 403, type: 'permission_error', message: `Your API key ${KEY} does not have permission` });
  await assert.rejects(routerFor('anthropic').complete({ model: 'anthropic/claude-3-5-haiku', system: '', messages: [{ role: 'user', content: 'hi' }], agentName: 'a' }, ctx),
    (err: any) => err.code === 'BAD_REQUEST' && /rejected the API key \(HTTP 403\)/.test(err.message) && !err.message.includes('SECRET'));
  fakes.anthropic.script({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' });
  await assert.rejects(routerFor('anthropic').complete({ model: 'anthropic/claude-3-5-haiku', system: '', messages: [{ role: 'user', content: 'hi' }], agentName: 'a' }, ctx),
    (err: any) => err.code === 'SERVICE_UNAVAILABLE' && /failed \(HTTP 529\): Overloaded/.test(err.message));
});
