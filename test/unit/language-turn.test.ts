import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initialState, runTurn, runDelegation, type ConversationState } from '../../actors/language/index.js';
import { GIVE_UP_MESSAGE, DEFAULT_FALLBACK, renderTemplate, parseTemplate } from '../../actors/language/internal.js';
import { compileOrThrow, converse, example, testHost } from '../fixtures/language/host.js';

test('greeter answers "hi there" and falls back on "what time is it"', async () => {
  const host = testHost([example('greeter')]);
  const [hi, time] = await converse(host, 'greeter', ['hi there', 'what time is it']);
  assert.equal(hi!.response, 'Hello from greeter!');
  assert.equal(hi!.agentName, 'greeter');
  assert.equal(time!.response, 'I only say hello.');
  assert.equal(time!.state.turn, 2);
  assert.deepEqual(time!.traceEvents, []);
});

test('usage is a deterministic estimate of words and punctuation', async () => {
  const host = testHost([example('greeter')]);
  const [r] = await converse(host, 'greeter', ['hi there']);
  assert.deepEqual(r!.usage, { inputTokens: 2, outputTokens: 4 }); // "Hello from greeter !"
});

test('runTurn does not mutate the input state', async () => {
  const host = testHost([example('billing_support'), example('human_desk'), example('fraud_check')]);
  const state = initialState('billing_support');
  const before = structuredClone(state);
  const r = await runTurn(state, { message: 'I want a refund', sessionId: 's' }, host);
  assert.deepEqual(state, before);
  assert.ok(r.state.pending, 'the new state waits for the invoice number');
});

test('unknown current agent rejects with NOT_FOUND', async () => {
  await assert.rejects(runTurn(initialState('ghost'), { message: 'hi', sessionId: 's' }, testHost([])), (e: unknown) => (e as { code?: string }).code === 'NOT_FOUND');
});

test('GATHER across turns: prompt, invalid answer re-prompted, then the flow finishes', async () => {
  const host = testHost([example('billing_support'), example('human_desk'), example('fraud_check')]);
  const turns = await converse(host, 'billing_support', ['I want a refund', 'no idea', 'INV-42', 'it came late']);
  assert.equal(turns[0]!.response, "What's the invoice number?");
  assert.deepEqual(turns[0]!.state.pending, { agent: 'billing_support', flow: 'refund', step: 0, slot: 'invoice_id', attempts: 0 });
  assert.equal(turns[1]!.response, "Sorry, that doesn't look right. What's the invoice number?");
  assert.equal(turns[1]!.state.pending?.attempts, 1);
  assert.equal(turns[2]!.response, 'Why do you want a refund? (damaged, late or other)');
  assert.equal(turns[2]!.state.slots['invoice_id'], 'INV-42');
  assert.equal(turns[3]!.response, 'Refund for INV-42 started.');
  assert.equal(turns[3]!.state.slots['reason'], 'late');
  assert.equal(turns[3]!.state.pending, undefined);
});

test('GATHER is abandoned politely after three invalid answers', async () => {
  const host = testHost([example('billing_support'), example('human_desk'), example('fraud_check')]);
  const turns = await converse(host, 'billing_support', ['refund please', 'x', 'y', 'z', 'how do I pay']);
  assert.match(turns[1]!.response, /^Sorry, that doesn't look right/);
  assert.match(turns[2]!.response, /^Sorry, that doesn't look right/);
  assert.equal(turns[3]!.response, GIVE_UP_MESSAGE);
  assert.equal(turns[3]!.state.pending, undefined);
  assert.equal(turns[4]!.response, 'Card or bank transfer, from the Billing page.');
});

test('slot values are taken from the triggering message', async () => {
  const host = testHost([example('billing_support'), example('human_desk'), example('fraud_check')]);
  const [r] = await converse(host, 'billing_support', ['I want my money back for INV-77, the parcel was damaged']);
  assert.equal(r!.response, 'Refund for INV-77 started.');
  assert.deepEqual(r!.state.slots, { invoice_id: 'INV-77', reason: 'damaged' });
  const [partial] = await converse(host, 'billing_support', ['refund INV-5']);
  assert.equal(partial!.response, 'Why do you want a refund? (damaged, late or other)');
});

test('number and enum slots validate their answers', async () => {
  const p = compileOrThrow(`AGENT: shop
FLOW: order
  TRIGGER: pattern /order/i
  GATHER:
    size: enum[small, large] PROMPT "Small or large?"
    count: number PROMPT "How many?" VALIDATE /^[1-9]$/
  RESPOND: "{{count}} x {{size}}"
`);
  const host = testHost([p]);
  const t = await converse(host, 'shop', ['order', 'medium', 'LARGE', 'twelve', '12', '0']);
  assert.deepEqual(t.map((r) => r.response), [
    'Small or large?',
    "Sorry, that doesn't look right. Small or large? Please answer with one of: small, large.",
    'How many?',
    "Sorry, that doesn't look right. How many?",
    "Sorry, that doesn't look right. How many?",
    'Sorry, I still couldn\'t understand that, so let\'s leave it there for now. You can start again whenever you like.',
  ]);
  const ok = await converse(host, 'shop', ['order', 'small please', '3']);
  assert.equal(ok[2]!.response, '3 x small');
  assert.equal(ok[2]!.state.slots['count'], 3);
});

test('a new run of a flow does not reuse old answers', async () => {
  const host = testHost([example('billing_support'), example('human_desk'), example('fraud_check')]);
  const first = await converse(host, 'billing_support', ['refund INV-1 late']);
  assert.equal(first[0]!.response, 'Refund for INV-1 started.');
  const again = await converse(host, 'billing_support', ['another refund'], first[0]!.state);
  assert.equal(again[0]!.response, "What's the invoice number?");
});

test('KNOWLEDGE answers close questions; unrelated ones get the FALLBACK', async () => {
  const p = compileOrThrow(`AGENT: faq
KNOWLEDGE:
  - Q: How do I pay? | A: By card.
  - Q: When is my invoice due? | A: After 30 days, {{session.id}}.
FALLBACK: "Ask me about payments."
`);
  const host = testHost([p]);
  const t = await converse(host, 'faq', ['how can I pay', 'when are invoices due?', 'tell me a joke']);
  assert.equal(t[0]!.response, 'By card.');
  assert.equal(t[1]!.response, 'After 30 days, sess-1.');
  assert.equal(t[2]!.response, 'Ask me about payments.');
});

test('without FALLBACK the built-in sentence is used', async () => {
  const p = compileOrThrow('AGENT: quiet\n');
  const [r] = await converse(testHost([p]), 'quiet', ['anything']);
  assert.equal(r!.response, DEFAULT_FALLBACK);
});

test('intent triggers match the words of the intent name', async () => {
  const p = compileOrThrow(`AGENT: a
FLOW: human
  TRIGGER: intent speak_to_human
  RESPOND: "ok"
FALLBACK: "no"
`);
  const t = await converse(testHost([p]), 'a', ['I want to speak to a human', 'speak to human', 'speak up', 'humans only']);
  assert.deepEqual(t.map((r) => r.response), ['ok', 'ok', 'no', 'no']);
});

test('when several flows match, the first in source order wins', async () => {
  const p = compileOrThrow(`AGENT: a
FLOW: first
  TRIGGER: pattern /a/
  RESPOND: "first"
FLOW: second
  TRIGGER: pattern /ab/
  RESPOND: "second"
`);
  const [r] = await converse(testHost([p]), 'a', ['ab']);
  assert.equal(r!.response, 'first');
});

test('templates: builtins, slots, dotted paths; unknown and prototype names render empty', async () => {
  const p = compileOrThrow(`AGENT: tpl
FLOW: t
  TRIGGER: pattern /./
  RESPOND: "[{{message}}|{{session.id}}|{{agent.name}}|{{nope}}|{{__proto__}}|{{constructor.name}}|{{message.length}}|{{session.__proto__.x}}|{{toString}}]"
`);
  const [r] = await converse(testHost([p]), 'tpl', ['hey']);
  assert.equal(r!.response, '[hey|sess-1|tpl||||||]');
  const { template } = parseTemplate('{{a.b.c}}-{{ a.b.c }}-{{a.constructor}}');
  assert.equal(renderTemplate(template, { a: { b: { c: 7 } } }), '7-7-');
  assert.equal(renderTemplate(parseTemplate('{{x}}').template, Object.create({ x: 'inherited' })), '');
});

test('IF steps compare slots and skip their block when false', async () => {
  const p = compileOrThrow(`AGENT: shop
FLOW: order
  TRIGGER: pattern /order/i
  GATHER:
    count: number PROMPT "How many?"
  IF: count > 10 AND count <= 100
    RESPOND: "Big order."
  IF: count == 1 OR count == 2
    RESPOND: "Small order."
  RESPOND: "Ordered {{count}}."
`);
  const host = testHost([p]);
  const big = await converse(host, 'shop', ['order', '50']);
  assert.equal(big[1]!.response, 'Big order.\nOrdered 50.');
  const small = await converse(host, 'shop', ['order', '2']);
  assert.equal(small[1]!.response, 'Small order.\nOrdered 2.');
  const mid = await converse(host, 'shop', ['order', '5']);
  assert.equal(mid[1]!.response, 'Ordered 5.');
});

test('streaming: pieces arrive word by word and concatenate to the response', async () => {
  const pieces: string[] = [];
  const p = compileOrThrow(`AGENT: s
FLOW: f
  TRIGGER: pattern /go/
  RESPOND: "First  line, here."
  RESPOND: "Second line."
`);
  const host = testHost([p], { onText: (d) => pieces.push(d) });
  const [r] = await converse(host, 's', ['go']);
  assert.equal(r!.response, 'First  line, here.\nSecond line.');
  assert.equal(pieces.join(''), r!.response);
  assert.ok(pieces.length >= 5, `expected word-sized pieces, got ${JSON.stringify(pieces)}`);
  // A throwing listener does not break the turn.
  const bad = testHost([p], { onText: () => { throw new Error('listener'); } });
  const [r2] = await converse(bad, 's', ['go']);
  assert.equal(r2!.response, r!.response);
});

test('runDelegation is a stateless one-shot run', async () => {
  const r = await runDelegation(example('fraud_check'), 'assess refund of INV-900 because late', testHost([]));
  assert.equal(r.response, 'high');
  assert.ok(r.usage.inputTokens > 0 && r.usage.outputTokens === 1);
  assert.equal((await runDelegation(example('fraud_check'), 'assess INV-12', testHost([]))).response, 'low');
});

test('state is JSON-serialisable between turns', async () => {
  const host = testHost([example('billing_support'), example('human_desk'), example('fraud_check')]);
  let state: ConversationState = initialState('billing_support');
  for (const m of ['refund', 'INV-3', 'other']) {
    const r = await runTurn(JSON.parse(JSON.stringify(state)), { message: m, sessionId: 's' }, host);
    state = r.state;
  }
  assert.equal(state.slots['reason'], 'other');
  assert.equal(state.turn, 3);
});

test('a state carrying "__proto__" or "constructor" keys (from JSON) cannot reach prototypes', async () => {
  const p = compileOrThrow(`AGENT: tpl
FLOW: t
  TRIGGER: pattern /./
  RESPOND: "[{{__proto__}}|{{constructor}}|{{x.__proto__}}|{{x.y}}]"
`);
  const state = JSON.parse('{"currentAgent":"tpl","handoffCount":0,"turn":0,"slots":{"__proto__":"evil","constructor":"evil"},"vars":{"x":{"__proto__":{"y":"evil"}}}}') as ConversationState;
  const r = await runTurn(state, { message: 'go', sessionId: 's' }, testHost([p]));
  assert.equal(r.response, '[|||]');
  assert.equal(({} as Record<string, unknown>)['y'], undefined, 'Object.prototype untouched');
});

test('referencedAgents includes targets nested in IF blocks', async () => {
  const { referencedAgents } = await import('../../actors/language/index.js');
  const p = compileOrThrow(`AGENT: a
FLOW: f
  TRIGGER: /x/
  IF: message == x
    DELEGATE: zed
    IF: zed == ok
      HANDOFF: bee
HANDOFF: cat WHEN confidence < 0.1
`);
  assert.deepEqual(referencedAgents(p), ['bee', 'cat', 'zed']);
});
