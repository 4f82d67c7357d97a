import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initialState, renderTemplateText, resumeTurn, runTurn, templateSecretNames, HOLDING_MESSAGE, STILL_WORKING_MESSAGE, ASYNC_EXPIRED_ERROR, type ToolCallRequest } from '../../actors/language/index.js';
import { compileOrThrow, converse, example, testHost } from '../fixtures/language/host.js';

const SHOP = `AGENT: shop
TOOLS:
  lookup_invoice:
    PARAMS: { invoice_id: string, verbose: boolean }
    HTTP: GET https://billing.example.com/invoices/{{params.invoice_id}}
    HEADERS: { Authorization: "Bearer {{secrets.billing_api_key}}", X-Trace: "on" }
    TIMEOUT: 5s
  risk_score:
    PARAMS: { amount: number }
    CODE: |
      export default async ({ amount }) => ({ risk: amount > 500 ? 'high' : 'low' })
    TIMEOUT: 2s
    MEMORY_LIMIT: 32MB
FLOW: invoice
  TRIGGER: pattern /invoice/i
  GATHER:
    invoice_id: string VALIDATE /^INV-\\d+$/
  CALL: lookup_invoice(invoice_id, verbose: "yes") AS invoice
  IF: invoice_error
    RESPOND: "Lookup failed: {{invoice_error}}"
  IF: NOT invoice_error
    RESPOND: "{{invoice_id}} is {{invoice.status}} for {{invoice.amount}} EUR."
  CALL: risk_score(invoice.amount) AS score
  RESPOND: "Risk: {{score.risk}}{{score_error}}"
`;

test('TOOLS compile to plain tool specs (HTTP and CODE) with defaults and limits', () => {
  const p = compileOrThrow(SHOP);
  assert.deepEqual(p.tools, [
    {
      kind: 'http', name: 'lookup_invoice', params: { invoice_id: 'string', verbose: 'boolean' }, method: 'GET',
      url: 'https://billing.example.com/invoices/{{params.invoice_id}}',
      headers: { Authorization: 'Bearer {{secrets.billing_api_key}}', 'X-Trace': 'on' }, timeoutMs: 5000, async: false,
    },
    { kind: 'code', name: 'risk_score', params: { amount: 'number' }, source: "export default async ({ amount }) => ({ risk: amount > 500 ? 'high' : 'low' })", timeoutMs: 2000, memoryMb: 32 },
  ]);
  assert.deepEqual(JSON.parse(JSON.stringify(p)), p);
  const billing = example('billing_support');
  const verify = billing.tools!.find((t) => t.name === 'verify_payment')!;
  assert.equal(verify.kind, 'http');
  if (verify.kind === 'http') {
    assert.equal(verify.async, true);
    assert.equal(verify.ttlMs, 600_000);
    assert.equal(verify.body, '{"invoice_id": "{{params.invoice_id}}"}');
  }
  assert.equal(billing.memoryStore, 'billing_notes');
});

test('CALL runs host.callTool with typed params; the result is usable in templates and IF', async () => {
  const calls: ToolCallRequest[] = [];
  const host = testHost([compileOrThrow(SHOP)], {
    callTool: async (req) => {
      calls.push(req);
      if (req.tool.name === 'lookup_invoice') return { ok: true, result: { status: 'paid', amount: '900' } };
      return { ok: true, result: { risk: (req.params['amount'] as number) > 500 ? 'high' : 'low' } };
    },
  });
  const [r] = await converse(host, 'shop', ['invoice INV-7 please']);
  assert.equal(r!.response, 'INV-7 is paid for 900 EUR.\nRisk: high');
  assert.deepEqual(calls.map((c) => [c.tool.name, c.params, c.agentName]), [
    ['lookup_invoice', { invoice_id: 'INV-7', verbose: true }, 'shop'],
    ['risk_score', { amount: 900 }, 'shop'],
  ]);
  assert.deepEqual(r!.state.vars['invoice'], { status: 'paid', amount: '900' });
});

test('a failed, throwing or missing tool gives an error value the flow can branch on', async () => {
  const failing = testHost([compileOrThrow(SHOP)], { callTool: async () => ({ ok: false, error: 'HTTP 503' }) });
  const [f] = await converse(failing, 'shop', ['invoice INV-7']);
  // risk_score is never called: its input (invoice.amount) is missing, which is an error value too.
  assert.equal(f!.response, 'Lookup failed: HTTP 503\nRisk: amount is missing');
  assert.equal(f!.state.vars['invoice_error'], 'HTTP 503');
  const throwing = testHost([compileOrThrow(SHOP)], { callTool: async () => { throw new Error('socket hang up'); } });
  const [t] = await converse(throwing, 'shop', ['invoice INV-7']);
  assert.match(t!.response, /^Lookup failed: socket hang up/);
  const none = testHost([compileOrThrow(SHOP)]);
  const [n] = await converse(none, 'shop', ['invoice INV-7']);
  assert.match(n!.response, /^Lookup failed: tools are not available here/);
});

test('ASYNC tool: the turn suspends, other messages hear it is in progress, resumeTurn continues with the payload', async () => {
  const host = testHost([example('billing_support'), example('human_desk'), example('fraud_check')], {
    now: () => new Date('2025-01-01T00:00:00Z'),
    callTool: async (req) => (req.tool.kind === 'http' && req.tool.async ? { ok: true, suspended: { callbackId: 'cb-1' } } : { ok: false, error: 'offline' }),
  });
  const [t1, t2] = await converse(host, 'billing_support', ['please verify my payment for INV-5', 'hello?']);
  assert.equal(t1!.response, "Let me check the payment for INV-5. I'll get back to you here.");
  assert.equal(t1!.suspended, true);
  assert.deepEqual(t1!.state.pending, { agent: 'billing_support', flow: 'payment_check', step: 2, callbackId: 'cb-1', as: 'payment', expiresAt: '2025-01-01T00:10:00.000Z' });
  assert.equal(t2!.response, STILL_WORKING_MESSAGE);
  assert.equal(t2!.state.pending?.callbackId, 'cb-1');
  await assert.rejects(resumeTurn(t2!.state, { callbackId: 'other', payload: {} }, host), (e: unknown) => (e as { code?: string }).code === 'CONFLICT');
  const done = await resumeTurn(t2!.state, { callbackId: 'cb-1', payload: { status: 'confirmed' }, sessionId: 's' }, host);
  assert.equal(done.response, 'The payment for INV-5 is confirmed.');
  assert.equal(done.suspended, false);
  assert.equal(done.state.pending, undefined);
  assert.deepEqual(done.state.vars['payment'], { status: 'confirmed' });
  const failed = await resumeTurn(t2!.state, { callbackId: 'cb-1', error: 'card declined' }, host);
  assert.equal(failed.response, "Sorry, I couldn't verify that payment (card declined).");
});

test('ASYNC: the holding message when nothing was said, and expiry after the TTL', async () => {
  let now = new Date('2025-01-01T00:00:00Z');
  const p = compileOrThrow(`AGENT: a
TOOLS:
  slow:
    ASYNC: true
    HTTP: POST https://x.example.com/slow
    TTL: 1m
FLOW: f
  TRIGGER: pattern /go/
  CALL: slow() AS out
  RESPOND: "out={{out}} error={{out_error}}"
`);
  const host = testHost([p], { now: () => now, callTool: async () => ({ ok: true, suspended: { callbackId: 'cb' } }) });
  const [r] = await converse(host, 'a', ['go']);
  assert.equal(r!.response, HOLDING_MESSAGE);
  now = new Date('2025-01-01T00:01:00Z');
  const late = await runTurn(r!.state, { message: 'anyone?', sessionId: 's' }, host);
  assert.equal(late.response, `out= error=${ASYNC_EXPIRED_ERROR}`);
  assert.equal(late.state.pending, undefined);
});

test('renderTemplateText and templateSecretNames serve the tools executor', () => {
  const text = 'https://x.example.com/{{params.id}}?k={{secrets.key}}&f={{params.flag}}&again={{secrets.key}}{{secrets.other}}';
  assert.deepEqual(templateSecretNames(text), ['key', 'other']);
  assert.equal(
    renderTemplateText(text, { params: { id: 'a b/c', flag: false }, secrets: { key: 'K', other: 'O' } }, { encode: encodeURIComponent }),
    'https://x.example.com/a%20b%2Fc?k=K&f=false&again=KO',
  );
  assert.equal(renderTemplateText('{{params.__proto__}}{{nope}}x', { params: {} }), 'x');
});

test('runTurn is unchanged for a builtin agent without tools (initial state round trip)', async () => {
  const r = await runTurn(initialState('greeter'), { message: 'hi', sessionId: 's' }, testHost([example('greeter')]));
  assert.equal(r.response, 'Hello from greeter!');
  assert.equal(r.actions, undefined);
  assert.deepEqual(r.modelCalls, []);
});
