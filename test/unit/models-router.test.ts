// The model router: resolution with overrides, deadlines, cancellation, cost and llm events.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ModelRouter, PriceTable, type LlmEvent, type ModelSettingsSource, type ResolvedProvider } from '../../actors/models/index.js';
import type { ModelCallRequest } from '../../actors/language/model-port.js';
import { startFakeOpenAi, type FakeOpenAi } from '../fixtures/models/fake-openai-server.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fixtures/models/fake-anthropic-server.js';

let openaiFake: FakeOpenAi;
let localFake: FakeOpenAi;
let anthropicFake: FakeAnthropic;
before(async () => {
  openaiFake = await startFakeOpenAi();
  localFake = await startFakeOpenAi({ requireKey: false });
  anthropicFake = await startFakeAnthropic();
});
after(async () => {
  await openaiFake.close();
  await localFake.close();
  await anthropicFake.close();
});

const TIMEOUTS = { totalMs: 600, firstByteMs: 200 };
/** Providers of project p1 of tenant t1 (t2 has none). */
function settings(): ModelSettingsSource {
  const providers: Record<string, ResolvedProvider> = {
    openai: { name: 'openai', kind: 'openai', baseUrl: `${openaiFake.base}/v1`, apiKey: 'sk-one', defaultModel: 'gpt-4o-mini', maxTokens: undefined, timeouts: TIMEOUTS },
    local: { name: 'local', kind: 'openai', baseUrl: `${localFake.base}/v1`, apiKey: undefined, defaultModel: undefined, maxTokens: undefined, timeouts: TIMEOUTS },
    anthropic: { name: 'anthropic', kind: 'anthropic', baseUrl: anthropicFake.base, apiKey: 'sk-ant-two', defaultModel: undefined, maxTokens: 512, timeouts: TIMEOUTS },
    nokey: { name: 'nokey', kind: 'anthropic', baseUrl: anthropicFake.base, apiKey: undefined, defaultModel: undefined, maxTokens: undefined, timeouts: TIMEOUTS },
  };
  return { resolveProvider: (tenantId, projectId, name) => (tenantId === 't1' && projectId === 'p1' && Object.hasOwn(providers, name) ? providers[name] : undefined) };
}
const prices = new PriceTable({ 'gpt-4o-mini': { input: 0.15, output: 0.6 }, 'claude-3-5-haiku': { input: 0.8, output: 4 } });
const router = (): ModelRouter => new ModelRouter({ settings: settings(), prices });
const ask = (model: string, extra: Partial<ModelCallRequest> = {}): ModelCallRequest => ({ model, system: 'sys', messages: [{ role: 'user', content: 'hi' }], agentName: 'support', ...extra });
const ctx = { tenantId: 't1', projectId: 'p1' };

test('a successful call reports usage, cost from the price table, and one llm event', async () => {
  openaiFake.script({ kind: 'stream', text: ['Hi', ' there'], usage: { prompt_tokens: 1_000_000, completion_tokens: 500_000 } });
  const events: LlmEvent[] = [];
  const deltas: string[] = [];
  const result = await router().complete(ask('openai/gpt-4o-mini-2024-07-18', { onText: (d) => deltas.push(d) }), { ...ctx, onEvent: (e) => events.push(e) });
  assert.equal(result.text, 'Hi there');
  assert.deepEqual(deltas, ['Hi', ' there']);
  assert.equal(result.provider, 'openai');
  assert.equal(result.model, 'gpt-4o-mini-2024-07-18');
  assert.ok(Math.abs(result.costUsd - 0.45) < 1e-9, 'a dated model costs as its family');
  assert.ok(result.durationMs >= 0);
  assert.equal(events.length, 1);
  const e = events[0]!;
  assert.equal(e.category, 'llm');
  assert.equal(e.event_type, 'llm_call');
  assert.equal(e.agent_name, 'support');
  assert.ok(!Number.isNaN(Date.parse(e.timestamp)));
  assert.equal(e.duration_ms, result.durationMs);
  assert.equal(e.error, undefined);
  assert.deepEqual(e.metadata, { provider: 'openai', model: 'gpt-4o-mini-2024-07-18', tokens_in: 1_000_000, tokens_out: 500_000, cost: result.costUsd });
});

test('a failed call throws a ParleyError and still reports an llm event with the error', async () => {
  anthropicFake.script({ kind: 'error', status: 500, type: 'api_error', message: 'Internal server error' });
  const events: LlmEvent[] = [];
  await assert.rejects(router().complete(ask('anthropic/claude-3-5-haiku'), { ...ctx, onEvent: (e) => events.push(e) }), (err: any) => err.code === 'SERVICE_UNAVAILABLE');
  assert.equal(events.length, 1);
  assert.match(events[0]!.error!, /Model provider "anthropic" failed \(HTTP 500\)/);
  assert.deepEqual(events[0]!.metadata, { provider: 'anthropic', model: 'claude-3-5-haiku', tokens_in: 0, tokens_out: 0, cost: 0, error_code: 'SERVICE_UNAVAILABLE' });
  assert.equal(anthropicFake.requests.at(-1)!.body.max_tokens, 512, 'the provider maxTokens setting is sent');
});

test('a throwing onEvent listener does not break the call', async () => {
  openaiFake.script({ kind: 'stream', text: ['fine'] });
  const result = await router().complete(ask('openai/gpt-4o-mini'), { ...ctx, onEvent: () => { throw new Error('listener bug'); } });
  assert.equal(result.text, 'fine');
});

test('resolution: bare provider uses its defaultModel; builtin, unknown providers and missing models are BAD_REQUEST', async () => {
  const r = router();
  assert.equal(r.resolve(ask('openai'), ctx).model, 'gpt-4o-mini');
  assert.equal(r.resolve(ask('local/llama3.1:8b'), ctx).provider.name, 'local');
  const events: LlmEvent[] = [];
  await assert.rejects(r.complete(ask('builtin'), { ...ctx, onEvent: (e) => events.push(e) }), (err: any) => err.code === 'BAD_REQUEST' && /builtin model runs inside the turn engine/.test(err.message));
  assert.equal(events[0]!.metadata.error_code, 'BAD_REQUEST');
  assert.equal(events[0]!.metadata.provider, '');
  await assert.rejects(r.complete(ask('mistral/large'), ctx), (err: any) => err.code === 'BAD_REQUEST' && /"mistral" is not configured for this project/.test(err.message));
  await assert.rejects(r.complete(ask('openai/gpt-4o-mini'), { tenantId: 't2', projectId: 'p1' }), (err: any) => err.code === 'BAD_REQUEST' && /not configured/.test(err.message));
  await assert.rejects(r.complete(ask('local'), ctx), (err: any) => err.code === 'BAD_REQUEST' && /has no defaultModel/.test(err.message));
  await assert.rejects(r.complete(ask('nokey/claude-3-5-haiku'), ctx), (err: any) => err.code === 'BAD_REQUEST' && /has no API key/.test(err.message));
});

test('overrides: per agent, then "*"; model with or without provider, provider alone, temperature', async () => {
  const r = router();
  const overrides = {
    support: { model: 'anthropic/claude-3-5-haiku', temperature: 0.1 },
    sales: { model: 'gpt-4.1' },
    triage: { provider: 'local' },
    '*': { temperature: 1.5, maxTokens: 77 },
  };
  const support = r.resolve(ask('openai/gpt-4o', { temperature: 0.9 }), { ...ctx, overrides });
  assert.deepEqual([support.provider.name, support.model, support.temperature], ['anthropic', 'claude-3-5-haiku', 0.1]);
  const sales = r.resolve(ask('openai/gpt-4o', { agentName: 'sales', temperature: 0.9 }), { ...ctx, overrides });
  assert.deepEqual([sales.provider.name, sales.model, sales.temperature], ['openai', 'gpt-4.1', 0.9]);
  const triage = r.resolve(ask('openai/gpt-4o', { agentName: 'triage' }), { ...ctx, overrides });
  assert.deepEqual([triage.provider.name, triage.model], ['local', 'gpt-4o']);
  const other = r.resolve(ask('openai/gpt-4o', { agentName: 'other', temperature: 0.2 }), { ...ctx, overrides });
  assert.deepEqual([other.provider.name, other.model, other.temperature], ['openai', 'gpt-4o', 1.5]);

  openaiFake.script({ kind: 'stream', text: ['x'] });
  await r.complete(ask('openai/gpt-4o', { agentName: 'other' }), { ...ctx, overrides });
  assert.equal(openaiFake.requests.at(-1)!.body.temperature, 1.5, 'the override reaches the wire');
  assert.equal(openaiFake.requests.at(-1)!.body.max_tokens, 77);
  assert.equal(openaiFake.requests.at(-1)!.headers['authorization'], 'Bearer sk-one');
  localFake.script({ kind: 'stream', text: ['local ', 'reply'] });
  assert.equal((await r.complete(ask('local/llama3'), ctx)).text, 'local reply');
  assert.equal(localFake.requests.at(-1)!.headers['authorization'], undefined, 'a provider without a key sends no Authorization');
});

test('a provider that never answers fails at the first-byte deadline with a clear error', async () => {
  openaiFake.script({ kind: 'hang' });
  const events: LlmEvent[] = [];
  const started = Date.now();
  await assert.rejects(router().complete(ask('openai/gpt-4o-mini'), { ...ctx, onEvent: (e) => events.push(e) }), (err: any) => {
    assert.equal(err.code, 'SERVICE_UNAVAILABLE');
    assert.match(err.message, /did not answer in time \(first-byte deadline of 200 ms\)/);
    assert.equal(err.details.timeoutMs, 200);
    return true;
  });
  assert.ok(Date.now() - started < 5000, 'released long before any default deadline');
  assert.equal(events[0]!.metadata.error_code, 'SERVICE_UNAVAILABLE');
});

test('a provider that stalls mid-stream fails at the total deadline; late deltas are not delivered', async () => {
  anthropicFake.script({ kind: 'stall', text: 'Start' });
  const deltas: string[] = [];
  await assert.rejects(router().complete(ask('anthropic/claude-3-5-haiku', { onText: (d) => deltas.push(d) }), ctx), (err: any) => {
    assert.equal(err.code, 'SERVICE_UNAVAILABLE');
    assert.match(err.message, /\(total deadline of 600 ms\)/);
    return true;
  });
  assert.deepEqual(deltas, ['Start']);
});

test('the caller aborting cancels the call (already aborted, and while waiting)', async () => {
  await assert.rejects(router().complete(ask('openai/gpt-4o-mini'), { ...ctx, signal: AbortSignal.abort() }), (err: any) => err.code === 'SERVICE_UNAVAILABLE' && /cancelled/.test(err.message));
  openaiFake.script({ kind: 'hang' });
  const controller = new AbortController();
  const call = router().complete(ask('openai/gpt-4o-mini'), { ...ctx, signal: controller.signal });
  setTimeout(() => controller.abort(), 20);
  await assert.rejects(call, (err: any) => err.code === 'SERVICE_UNAVAILABLE' && /The model call was cancelled/.test(err.message));
});

test('an unreachable provider is SERVICE_UNAVAILABLE naming the host, not the key', async () => {
  const dead: ModelSettingsSource = {
    resolveProvider: () => ({ name: 'gone', kind: 'openai', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'sk-never-shown-1234', defaultModel: 'm', maxTokens: undefined, timeouts: { totalMs: 2000, firstByteMs: 2000 } }),
  };
  await assert.rejects(new ModelRouter({ settings: dead, prices }).complete(ask('gone/m'), ctx), (err: any) => {
    assert.equal(err.code, 'SERVICE_UNAVAILABLE');
    assert.match(err.message, /Could not reach model provider "gone" at 127\.0\.0\.1:1/);
    assert.ok(!err.message.includes('never-shown'));
    return true;
  });
});

test('price table: provider-scoped keys win, longest prefix wins, operator JSON (inline or file) overrides defaults', () => {
  const table = new PriceTable({ 'gpt-4o': { input: 2.5, output: 10 }, 'gpt-4o-mini': { input: 0.15, output: 0.6 }, 'local/gpt-4o-mini': { input: 0, output: 0 } });
  assert.deepEqual(table.priceOf('openai', 'gpt-4o-mini-2024-07-18'), { input: 0.15, output: 0.6 });
  assert.deepEqual(table.priceOf('openai', 'gpt-4o-2024-08-06'), { input: 2.5, output: 10 });
  assert.deepEqual(table.priceOf('local', 'gpt-4o-mini'), { input: 0, output: 0 });
  assert.equal(table.priceOf('openai', 'llama3'), undefined);
  assert.equal(table.cost('openai', 'llama3', { inputTokens: 10, outputTokens: 10 }), 0);

  const inline = PriceTable.fromEnv({ PARLEY_MODEL_PRICES: '{"gpt-4o-mini": {"input": 1, "output": 2}}' });
  assert.equal(inline.cost('openai', 'gpt-4o-mini', { inputTokens: 1_000_000, outputTokens: 1_000_000 }), 3);
  assert.deepEqual(inline.priceOf('anthropic', 'claude-3-5-haiku-20241022'), { input: 0.8, output: 4 }, 'defaults stay');
  const dir = mkdtempSync(join(tmpdir(), 'parley-prices-'));
  try {
    const file = join(dir, 'prices.json');
    writeFileSync(file, '{"local/llama3": {"input": 0.01, "output": 0.02}}');
    assert.deepEqual(PriceTable.fromEnv({ PARLEY_MODEL_PRICES: file }).priceOf('local', 'llama3'), { input: 0.01, output: 0.02 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => PriceTable.fromEnv({ PARLEY_MODEL_PRICES: '{"m": {"input": -1, "output": 0}}' }), /PARLEY_MODEL_PRICES: Model price for "m"/);
  assert.throws(() => PriceTable.fromEnv({ PARLEY_MODEL_PRICES: '/no/such/prices.json' }), /PARLEY_MODEL_PRICES: cannot read the file/);
});
