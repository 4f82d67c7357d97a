import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initialState, runTurn, MAX_MODEL_ROUNDS, type ModelCallRequest, type ModelCallResult } from '../../actors/language/index.js';
import { compileOrThrow, testHost } from '../fixtures/language/host.js';

const AGENT = `AGENT: helper
MODEL: openai/gpt-4o-mini
TEMPERATURE: 0.3
PERSONA: |
  You are a friendly helper.
KNOWLEDGE:
  - Q: How do I pay? | A: By card.
TOOLS:
  weather:
    DESCRIPTION: Current weather in a city
    PARAMS: { city: string }
    HTTP: GET https://weather.example.com/{{params.city}}
  later:
    ASYNC: true
    HTTP: POST https://x.example.com/later
FLOW: order
  TRIGGER: pattern /order/i
  GATHER:
    item: string PROMPT "What would you like?"
  RESPOND:
FALLBACK: "I have nothing to say."
`;

function reply(text: string, toolCalls: ModelCallResult['toolCalls'] = []): ModelCallResult {
  return { text, toolCalls, usage: { inputTokens: 10, outputTokens: 3 }, costUsd: 0.001, provider: 'openai', model: 'gpt-4o-mini', durationMs: 5 };
}

test('a model agent answers through host.complete with persona, knowledge, history and tools; a tool round runs', async () => {
  const requests: ModelCallRequest[] = [];
  const host = testHost([compileOrThrow(AGENT)], {
    complete: async (req) => {
      requests.push(structuredClone({ ...req, onText: undefined }));
      if (requests.length === 1) return reply('', [{ id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }]);
      return reply('It is sunny in Oslo.');
    },
    callTool: async (req) => ({ ok: true, result: { city: req.params['city'], sky: 'sunny' } }),
  });
  const r = await runTurn(initialState('helper'), { message: 'weather in Oslo?', sessionId: 's', history: [{ role: 'user', text: 'hi' }, { role: 'agent', text: 'hello' }] }, host);
  assert.equal(r.response, 'It is sunny in Oslo.');
  assert.equal(requests.length, 2);
  const first = requests[0]!;
  assert.equal(first.model, 'openai/gpt-4o-mini');
  assert.equal(first.temperature, 0.3);
  assert.equal(first.agentName, 'helper');
  assert.match(first.system, /^You are a friendly helper\./);
  assert.match(first.system, /Q: How do I pay\?\n {2}A: By card\./);
  assert.deepEqual(first.messages, [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'weather in Oslo?' }]);
  // ASYNC tools are not offered to models.
  assert.deepEqual(first.tools, [{ name: 'weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } }]);
  assert.deepEqual(requests[1]!.messages.slice(3), [
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }] },
    { role: 'tool', toolCallId: 'c1', content: '{"city":"Oslo","sky":"sunny"}' },
  ]);
  assert.equal(r.modelCalls.length, 2);
  assert.deepEqual(r.usage, { inputTokens: 4 + 20, outputTokens: 6 });
});

test('knowledge and flows still answer without the model; a bare RESPOND asks the model with the facts', async () => {
  const systems: string[] = [];
  const host = testHost([compileOrThrow(AGENT)], { complete: async (req) => (systems.push(req.system), reply(`Ordered: ${req.messages.at(-1)!.content}`)) });
  const pay = await runTurn(initialState('helper'), { message: 'how do I pay', sessionId: 's' }, host);
  assert.equal(pay.response, 'By card.');
  assert.equal(systems.length, 0);
  const ask = await runTurn(initialState('helper'), { message: 'I want to order', sessionId: 's' }, host);
  assert.equal(ask.response, 'What would you like?');
  const done = await runTurn(ask.state, { message: 'a blue mug', sessionId: 's' }, host);
  assert.equal(done.response, 'Ordered: a blue mug');
  assert.match(systems[0]!, /Facts from this conversation:\n- item: a blue mug/);
});

test('tool rounds stop after MAX_MODEL_ROUNDS: the last call is offered no tools', async () => {
  let calls = 0;
  const host = testHost([compileOrThrow(AGENT)], {
    complete: async (req) => {
      calls++;
      return req.tools ? reply('', [{ id: `c${calls}`, name: 'weather', arguments: { city: 'X' } }]) : reply('giving up');
    },
    callTool: async () => ({ ok: false, error: 'offline' }),
  });
  const r = await runTurn(initialState('helper'), { message: 'loop forever', sessionId: 's' }, host);
  assert.equal(calls, MAX_MODEL_ROUNDS);
  assert.equal(r.response, 'giving up');
});

test('model text streams through onText once; an empty model answer falls back', async () => {
  const pieces: string[] = [];
  const host = testHost([compileOrThrow(AGENT)], {
    onText: (d) => pieces.push(d),
    complete: async (req) => {
      req.onText?.('Hello ');
      req.onText?.('there.');
      return reply('Hello there.');
    },
  });
  const r = await runTurn(initialState('helper'), { message: 'hey', sessionId: 's' }, host);
  assert.equal(r.response, 'Hello there.');
  assert.equal(pieces.join(''), 'Hello there.');
  const empty = testHost([compileOrThrow(AGENT)], { complete: async () => reply('  ') });
  assert.equal((await runTurn(initialState('helper'), { message: 'hey', sessionId: 's' }, empty)).response, 'I have nothing to say.');
});

test('a model agent on a host without complete fails the turn with a clear error', async () => {
  await assert.rejects(runTurn(initialState('helper'), { message: 'hey', sessionId: 's' }, testHost([compileOrThrow(AGENT)])), (e: unknown) => {
    const err = e as { code?: string; message?: string };
    return err.code === 'SERVICE_UNAVAILABLE' && /needs the language model openai\/gpt-4o-mini/.test(err.message ?? '');
  });
});
