import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileOrThrow, converse, deferred, testHost } from '../fixtures/language/host.js';

const FAN_OUT = `AGENT: onboarding
FLOW: screen
  TRIGGER: pattern /screen/i
  DELEGATE: [kyc_check, sanctions_check] TASK "screen {{contact.identity}}" AS results
  IF: results_error
    RESPOND: "Some checks failed: {{results_error}}"
  IF: results.kyc_check_error
    RESPOND: "KYC could not run."
  RESPOND: "kyc={{results.kyc_check}} sanctions={{results.sanctions_check}}"
`;

test('parallel DELEGATE starts every delegate before any finishes; one trace event each', async () => {
  const kyc = deferred<{ ok: true; response: string }>();
  const sanctions = deferred<{ ok: true; response: string }>();
  const started: string[] = [];
  const host = testHost([compileOrThrow(FAN_OUT)], {
    delegate: (agent, task) => {
      started.push(`${agent}:${task}`);
      if (started.length === 2) {
        // Both calls began before either was allowed to finish; finish them in reverse order.
        sanctions.resolve({ ok: true, response: 'clear' });
        setTimeout(() => kyc.resolve({ ok: true, response: 'verified' }), 20);
      }
      return agent === 'kyc_check' ? kyc.promise : sanctions.promise;
    },
  });
  const [r] = await converse(host, 'onboarding', ['screen me']);
  assert.deepEqual(started, ['kyc_check:screen ', 'sanctions_check:screen ']);
  assert.equal(r!.response, 'kyc=verified sanctions=clear');
  assert.deepEqual(r!.traceEvents.map((e) => [e.type, e.data['toAgent'], e.data['ok']]), [['delegate', 'kyc_check', true], ['delegate', 'sanctions_check', true]]);
  for (const e of r!.traceEvents) assert.equal(typeof e.data['duration_ms'], 'number');
  assert.ok((r!.traceEvents[0]!.data['duration_ms'] as number) >= (r!.traceEvents[1]!.data['duration_ms'] as number));
});

test('contact fields reach templates', async () => {
  const tasks: string[] = [];
  const host = testHost([compileOrThrow(FAN_OUT)], { delegate: async (_a, task) => (tasks.push(task), { ok: true, response: 'ok' }) });
  const { runTurn, initialState } = await import('../../actors/language/index.js');
  await runTurn(initialState('onboarding'), { message: 'screen', sessionId: 's', contact: { identity: 'Ada Lovelace' } }, host);
  assert.deepEqual(tasks, ['screen Ada Lovelace', 'screen Ada Lovelace']);
});

test('a failed or timed-out delegate is an error value the caller branches on, not a crashed turn', async () => {
  const host = testHost([compileOrThrow(FAN_OUT)], {
    delegate: async (agent) => (agent === 'kyc_check' ? { ok: false, error: 'kyc service down' } : { ok: true, response: 'clear' }),
  });
  const [r] = await converse(host, 'onboarding', ['screen']);
  assert.equal(r!.response, 'Some checks failed: kyc_check: kyc service down\nKYC could not run.\nkyc= sanctions=clear');
  assert.deepEqual(r!.traceEvents.map((e) => e.data['ok']), [false, true]);

  const slow = compileOrThrow(`AGENT: a
FLOW: f
  TRIGGER: pattern /go/
  DELEGATE: sleepy TASK "wake up" AS answer TIMEOUT 30ms
  IF: answer_error
    RESPOND: "No answer: {{answer_error}}"
`);
  const never = testHost([slow], { delegate: () => new Promise(() => {}) });
  const [t] = await converse(never, 'a', ['go']);
  assert.equal(t!.response, 'No answer: sleepy did not answer within 30 ms');
  assert.equal(t!.traceEvents[0]!.data['ok'], false);
});

test('top-level DELEGATE runs before HANDOFF rules, which can use its result', async () => {
  const front = compileOrThrow(`AGENT: front
DELEGATE: fraud_check TASK "assess {{message}}" AS fraud WHEN intent != hello
HANDOFF: desk WHEN fraud == high REASON "fraud suspected"
FLOW: hello
  TRIGGER: intent hello
  RESPOND: "Hi!"
FALLBACK: "fraud={{fraud}}"
`);
  const desk = compileOrThrow('AGENT: desk\nFALLBACK: "Desk here."\n');
  const host = testHost([front, desk], { delegate: async (_a, task) => ({ ok: true, response: /stolen/.test(task) ? 'high' : 'low' }) });
  const [a, b, c] = await converse(host, 'front', ['hello', 'my card was stolen', 'x']);
  assert.equal(a!.response, 'Hi!');
  assert.deepEqual(a!.traceEvents, []);
  assert.equal(b!.response, 'Desk here.');
  assert.deepEqual(b!.traceEvents.map((e) => e.type), ['delegate', 'handoff']);
  assert.equal(b!.traceEvents[1]!.data['reason'], 'fraud suspected');
  assert.equal(c!.agentName, 'desk');
  const [stay] = await converse(host, 'front', ['what is up']);
  assert.equal(stay!.response, 'fraud=low');
});

test('parallel DELEGATE without AS stores each result under its agent name', async () => {
  const p = compileOrThrow(`AGENT: a
FLOW: f
  TRIGGER: pattern /go/
  DELEGATE: [b, c]
  RESPOND: "{{b}} {{c}} {{c_error}}"
`);
  const host = testHost([p], { delegate: async (agent, task) => (agent === 'b' ? { ok: true, response: `b did ${task}` } : { ok: false, error: 'c failed' }) });
  const [r] = await converse(host, 'a', ['go']);
  assert.equal(r!.response, 'b did go  c failed');
});
