import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TurnStep } from '../../actors/language/index.js';
import { converse, example, testHost } from '../fixtures/language/host.js';

const AT = '2025-03-01T10:00:00.000Z';
const programs = () => [example('billing_support'), example('human_desk'), example('fraud_check')];

/** Steps without their timing fields, for exact comparison. */
function shape(steps: TurnStep[]): Omit<TurnStep, 'at' | 'duration_ms'>[] {
  return steps.map(({ at: _at, duration_ms: _d, ...rest }) => rest);
}

test('a GATHER flow reports flow_start, prompts, an invalid answer, fills, the tool call and flow_end', async () => {
  const host = testHost(programs(), { now: () => new Date(AT) });
  const turns = await converse(host, 'billing_support', ['I want a refund', 'no idea', 'INV-42', 'it came late']);
  const agent = 'billing_support';
  assert.deepEqual(shape(turns[0]!.steps), [
    { kind: 'flow_start', agent, flow: 'refund' },
    { kind: 'gather_prompt', agent, flow: 'refund', slot: 'invoice_id' },
  ]);
  assert.deepEqual(shape(turns[1]!.steps), [{ kind: 'gather_invalid', agent, flow: 'refund', slot: 'invoice_id' }]);
  assert.deepEqual(shape(turns[2]!.steps), [
    { kind: 'gather_filled', agent, flow: 'refund', slot: 'invoice_id' },
    { kind: 'gather_prompt', agent, flow: 'refund', slot: 'reason' },
  ]);
  assert.deepEqual(shape(turns[3]!.steps), [
    { kind: 'gather_filled', agent, flow: 'refund', slot: 'reason' },
    { kind: 'tool_call', agent, tool: 'lookup_invoice', error: 'tools are not available here' },
    { kind: 'flow_end', agent, flow: 'refund' },
  ]);
  for (const turn of turns) for (const step of turn.steps) assert.equal(step.at, AT);
  const end = turns[3]!.steps.at(-1)!;
  assert.equal(typeof end.duration_ms, 'number');
});

test('a successful tool call has a duration and no error', async () => {
  const host = testHost(programs(), { callTool: async () => ({ ok: true, result: { amount: 10 } }), delegate: async () => ({ ok: true, response: 'low' }) });
  const turns = await converse(host, 'billing_support', ['refund INV-7 please', 'damaged']);
  const call = turns[1]!.steps.find((s) => s.kind === 'tool_call')!;
  assert.equal(call.tool, 'lookup_invoice');
  assert.equal(call.error, undefined);
  assert.ok(call.duration_ms! >= 0);
  // invoice_id came with the trigger message, so it was filled without a prompt.
  assert.deepEqual(shape(turns[0]!.steps).slice(0, 3), [
    { kind: 'flow_start', agent: 'billing_support', flow: 'refund' },
    { kind: 'gather_filled', agent: 'billing_support', flow: 'refund', slot: 'invoice_id' },
    { kind: 'gather_prompt', agent: 'billing_support', flow: 'refund', slot: 'reason' },
  ]);
});

test('three invalid answers abandon the flow with an error on flow_end', async () => {
  const host = testHost(programs());
  const turns = await converse(host, 'billing_support', ['I want a refund', 'x', 'y', 'z']);
  assert.deepEqual(shape(turns[3]!.steps), [
    { kind: 'gather_invalid', agent: 'billing_support', flow: 'refund', slot: 'invoice_id' },
    { kind: 'flow_end', agent: 'billing_support', flow: 'refund', error: 'abandoned after 3 invalid answers to invoice_id' },
  ]);
});

test('knowledge answers and fallbacks are reported with the agent that answered', async () => {
  const host = testHost([example('greeter'), ...programs()]);
  const [knowledge] = await converse(host, 'billing_support', ['How do I pay?']);
  assert.deepEqual(shape(knowledge!.steps), [{ kind: 'knowledge', agent: 'billing_support' }]);
  const [, fallback] = await converse(host, 'greeter', ['hi there', 'what time is it']);
  assert.deepEqual(shape(fallback!.steps), [{ kind: 'fallback', agent: 'greeter' }]);
});
