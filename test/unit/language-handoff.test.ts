import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_HANDOFFS_PER_TURN } from '../../actors/language/index.js';
import { compileOrThrow, converse, example, testHost } from '../fixtures/language/host.js';

const FIXED_NOW = new Date('2025-01-02T03:04:05.678Z');

test('HANDOFF in a flow: trace event, handoffCount, and the target answers in the same turn', async () => {
  const front = compileOrThrow(`AGENT: front
FLOW: escalate
  TRIGGER: pattern /manager/i
  HANDOFF: manager REASON "asked for a manager"
FALLBACK: "front fallback"
`);
  const manager = compileOrThrow(`AGENT: manager
FLOW: hello
  TRIGGER: pattern /manager/i
  RESPOND: "Manager here, you said: {{message}}"
`);
  const host = testHost([front, manager], { now: () => FIXED_NOW });
  const [r, next] = await converse(host, 'front', ['I want the manager', 'manager again']);
  assert.equal(r!.response, 'Manager here, you said: I want the manager');
  assert.equal(r!.agentName, 'manager');
  assert.equal(r!.state.currentAgent, 'manager');
  assert.equal(r!.state.handoffCount, 1);
  assert.deepEqual(r!.traceEvents, [{ type: 'handoff', data: { fromAgent: 'front', toAgent: 'manager', reason: 'asked for a manager', timestamp: '2025-01-02T03:04:05.678Z' } }]);
  // The manager keeps control on the next turn.
  assert.equal(next!.agentName, 'manager');
  assert.deepEqual(next!.traceEvents, []);
});

test('HANDOFF to an unknown agent answers the fallback and does not switch', async () => {
  const front = compileOrThrow(`AGENT: front
FLOW: escalate
  TRIGGER: pattern /manager/i
  HANDOFF: nobody
FALLBACK: "front fallback"
`);
  const [r] = await converse(testHost([front]), 'front', ['manager']);
  assert.equal(r!.response, 'front fallback');
  assert.equal(r!.state.currentAgent, 'front');
  assert.equal(r!.state.handoffCount, 0);
  assert.deepEqual(r!.traceEvents, []);
});

test('HANDOFF loop guard: at most 5 handoffs per turn, then the last agent answers its fallback', async () => {
  const ping = compileOrThrow('AGENT: ping\nHANDOFF: pong WHEN confidence < 0.4\nFALLBACK: "ping fallback"\n');
  const pong = compileOrThrow('AGENT: pong\nHANDOFF: ping WHEN confidence < 0.4\nFALLBACK: "pong fallback"\n');
  const [r] = await converse(testHost([ping, pong]), 'ping', ['hello?']);
  assert.equal(MAX_HANDOFFS_PER_TURN, 5);
  assert.equal(r!.traceEvents.length, 5);
  assert.equal(r!.state.handoffCount, 5);
  // ping → pong → ping → pong → ping → pong: pong is in control and answers its own fallback.
  assert.equal(r!.state.currentAgent, 'pong');
  assert.equal(r!.agentName, 'pong');
  assert.equal(r!.response, 'pong fallback');
});

test('top-level HANDOFF WHEN on low confidence', async () => {
  const host = testHost([example('billing_support'), example('human_desk'), example('fraud_check')]);
  const [r] = await converse(host, 'billing_support', ['my cat ate the router']);
  assert.equal(r!.agentName, 'human_desk');
  assert.equal(r!.response, "I'm passing you to a member of our team. Someone will reply here shortly.");
  assert.equal(r!.traceEvents[0]!.data['reason'], 'confidence < 0.4 OR intent == speak_to_human');
  // A close KNOWLEDGE question is confident enough to stay.
  const [k] = await converse(host, 'billing_support', ['how do I pay?']);
  assert.equal(k!.agentName, 'billing_support');
});

test('top-level HANDOFF WHEN on an intent, even with high confidence', async () => {
  const a = compileOrThrow(`AGENT: a
KNOWLEDGE:
  - Q: Can I speak to a human? | A: No.
HANDOFF: desk WHEN intent == speak_to_human REASON "wants a person"
`);
  const desk = compileOrThrow('AGENT: desk\nFALLBACK: "A person will answer."\n');
  const [r] = await converse(testHost([a, desk]), 'a', ['can I speak to a human']);
  assert.equal(r!.response, 'A person will answer.');
  assert.equal(r!.traceEvents[0]!.data['reason'], 'wants a person');
  const [stay] = await converse(testHost([a, desk]), 'a', ['speak louder']);
  assert.equal(stay!.agentName, 'a');
});

test('DELEGATE: trace event with duration_ms, result used in a later template', async () => {
  const host = testHost([example('billing_support'), example('human_desk'), example('fraud_check')]);
  const [r] = await converse(host, 'billing_support', ['refund INV-12 late']);
  assert.equal(r!.response, 'Refund for INV-12 started.');
  assert.deepEqual(host.delegations, [{ agent: 'fraud_check', task: 'assess refund of INV-12 because late' }]);
  const ev = r!.traceEvents.find((e) => e.type === 'delegate')!;
  assert.equal(ev.data['fromAgent'], 'billing_support');
  assert.equal(ev.data['toAgent'], 'fraud_check');
  assert.equal(ev.data['task'], 'assess refund of INV-12 because late');
  assert.equal(typeof ev.data['duration_ms'], 'number');
  assert.equal(r!.state.vars['risk'], 'low');
  // A risky refund: the delegate's result drives the IF and the handoff.
  const [risky] = await converse(host, 'billing_support', ['refund INV-900 damaged']);
  assert.equal(risky!.agentName, 'human_desk');
  assert.deepEqual(risky!.traceEvents.map((e) => e.type), ['delegate', 'handoff']);
  assert.equal(risky!.traceEvents[1]!.data['reason'], 'risky refund');
});

test('DELEGATE measures the time the delegate took', async () => {
  const a = compileOrThrow(`AGENT: a
FLOW: f
  TRIGGER: pattern /go/
  DELEGATE: slow TASK "do {{message}}" AS out
  RESPOND: "Got: {{out}}"
`);
  const host = testHost([a], { delegate: async () => { await new Promise((r) => setTimeout(r, 30)); return { ok: true, response: 'done' }; } });
  const [r] = await converse(host, 'a', ['go']);
  assert.equal(r!.response, 'Got: done');
  assert.ok((r!.traceEvents[0]!.data['duration_ms'] as number) >= 25, JSON.stringify(r!.traceEvents));
});

test('DELEGATE failure: empty result, an _error var, the flow goes on', async () => {
  const a = compileOrThrow(`AGENT: a
FLOW: f
  TRIGGER: pattern /go/
  DELEGATE: helper TASK "do it" AS out
  IF: out_error != ""
    RESPOND: "Helper failed: {{out_error}}"
  RESPOND: "Result: [{{out}}]"
`);
  const failing = testHost([a], { delegate: async () => ({ ok: false, error: 'timed out' }) });
  const [r] = await converse(failing, 'a', ['go']);
  assert.equal(r!.response, 'Helper failed: timed out\nResult: []');
  assert.equal(r!.traceEvents[0]!.data['ok'], false);
  const throwing = testHost([a], { delegate: async () => { throw new Error('boom'); } });
  const [t] = await converse(throwing, 'a', ['go']);
  assert.equal(t!.response, 'Helper failed: boom\nResult: []');
  const working = testHost([a], { delegate: async () => ({ ok: true, response: 'fine' }) });
  const [w] = await converse(working, 'a', ['go']);
  assert.equal(w!.response, 'Result: [fine]');
});

test('HANDOFF inside a delegation is not followed', async () => {
  const { runDelegation } = await import('../../actors/language/index.js');
  const b = compileOrThrow('AGENT: b\nHANDOFF: c WHEN confidence < 0.4\nFALLBACK: "b answers"\n');
  const c = compileOrThrow('AGENT: c\nFALLBACK: "c answers"\n');
  const r = await runDelegation(b, 'anything', testHost([b, c]));
  assert.equal(r.response, 'b answers');
});
