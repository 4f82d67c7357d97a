// ASYNC tools end to end: a turn suspends, an external system (a local HTTP server standing in
// for the payment provider we cannot reach) receives the call with its callback address, then
// POSTs /api/v1/callbacks/{callbackId}; the session resumes and the user gets the continuation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LmdbStore, SecretBox, signHmacSha256 } from '../../runtime/index.js';
import { CallbackStore } from '../../actors/index.js';
import { assertError, call, chat, startTestServer, type TestServer } from './harness.js';

const ENCRYPTION = `k1:${randomBytes(32).toString('base64')}`;

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

function paymentsAgent(port: number, ttl = '10m'): string {
  return [
    'AGENT: payments',
    'TOOLS:',
    '  verify_payment:',
    '    PARAMS: { invoice_id: string }',
    '    ASYNC: true',
    `    HTTP: POST http://127.0.0.1:${port}/verify`,
    '    BODY: "{\\"invoice_id\\": \\"{{params.invoice_id}}\\"}"',
    `    TTL: ${ttl}`,
    'FLOW: verify',
    '  TRIGGER: pattern /verify/i',
    '  GATHER:',
    '    invoice_id: string PROMPT "Which invoice?" VALIDATE /^INV-\\d+$/',
    '  CALL: verify_payment(invoice_id) AS result',
    '  IF: result_error',
    '    RESPOND: "Verification failed: {{result_error}}"',
    '  IF: NOT result_error',
    '    RESPOND: "Payment {{result.status}} for {{invoice_id}}."',
    'FALLBACK: "Ask me to verify a payment."',
    '',
  ].join('\n');
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, tries = 100): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('ASYNC tools and callbacks', () => {
  let server: TestServer;
  let fake: Server;
  const received: Received[] = [];
  let projectId: string;

  const createAgent = async (name: string, source: string): Promise<void> => {
    const created = await call(server.base, 'POST', `/api/projects/${projectId}/agents`, { body: { name, dslContent: source.replace('AGENT: payments', `AGENT: ${name}`) } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const compiled = await call(server.base, 'POST', `/api/projects/${projectId}/agents/${name}/versions`);
    assert.equal(compiled.status, 201, JSON.stringify(compiled.body));
  };
  const suspend = async (agentName: string, invoice: string): Promise<{ sessionId: string; callbackId: string; body: any }> => {
    const before = received.length;
    const reply = await chat(server, { projectId, agentName, message: `please verify ${invoice}` });
    const request = await until('the payment service call', async () => received[before]);
    return { sessionId: reply.sessionId, callbackId: String(request.headers['x-parley-callback-id']), body: reply.body };
  };
  const postCallback = (callbackId: string, body: string, headers: Record<string, string> = {}) =>
    call(server.base, 'POST', `/api/v1/callbacks/${callbackId}`, { key: null, body, headers: { 'content-type': 'application/json', ...headers } });
  const transcript = async (sessionId: string): Promise<any[]> => (await call(server.base, 'GET', `/api/projects/${projectId}/sessions/${sessionId}/messages`)).body.messages;
  const continuationOf = (sessionId: string) =>
    until('the continuation', async () => (await transcript(sessionId)).find((m) => m.callbackId !== undefined));

  before(async () => {
    fake = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body });
        res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":true}');
      });
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    server = await startTestServer({ env: { PARLEY_TOOLS_ALLOW_PRIVATE: 'true', PARLEY_ENCRYPTION_KEYS: ENCRYPTION } });
    projectId = server.projectId;
    const port = (fake.address() as AddressInfo).port;
    await createAgent('payments', paymentsAgent(port));
    await createAgent('signed_payments', paymentsAgent(port));
    await createAgent('quick_payments', paymentsAgent(port, '1s'));
  });
  after(async () => {
    await server.close();
    await new Promise((r) => fake.close(r));
  });

  test('a turn suspends, the callback resumes it once, and the next reply delivers the continuation', async () => {
    const { sessionId, callbackId, body } = await suspend('payments', 'INV-42');
    assert.equal(body.suspended, true);
    assert.match(body.response, /working on it/i);
    const request = received.at(-1)!;
    assert.equal(request.path, '/verify');
    assert.deepEqual(JSON.parse(request.body), { invoice_id: 'INV-42' });
    assert.match(callbackId, /^cb_[A-Za-z0-9_-]{32}$/);
    assert.ok(String(request.headers['x-parley-callback-url']).endsWith(`/api/v1/callbacks/${callbackId}`));

    const meanwhile = await chat(server, { sessionId, message: 'hello?' });
    assert.match(meanwhile.response, /still working/i);
    const view = await call(server.base, 'GET', `/api/projects/${projectId}/sessions/${sessionId}`);
    assert.equal(view.body.session.suspended, true);

    const first = await postCallback(callbackId, JSON.stringify({ status: 'confirmed' }));
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, { ok: true });
    const second = await postCallback(callbackId, JSON.stringify({ status: 'rejected' }));
    assert.equal(second.status, 200);
    assert.deepEqual(second.body, { ok: true, status: 'already_processed' });

    const continuation = await continuationOf(sessionId);
    assert.equal(continuation.text, 'Payment confirmed for INV-42.');
    assert.equal(continuation.callbackId, callbackId);
    // The duplicate ran nothing: exactly one continuation.
    assert.equal((await transcript(sessionId)).filter((m) => m.callbackId !== undefined).length, 1);

    const next = await chat(server, { sessionId, message: 'thanks' });
    assert.deepEqual(next.body.continuations.map((c: any) => c.response), ['Payment confirmed for INV-42.']);
    const later = await chat(server, { sessionId, message: 'bye' });
    assert.equal(later.body.continuations, undefined, 'a continuation is delivered once');
    assert.equal((await call(server.base, 'GET', `/api/projects/${projectId}/sessions/${sessionId}`)).body.session.suspended, false);
  });

  test('with a callback_secret the HMAC signature is required and checked', async () => {
    const secret = 'whsec_' + randomBytes(16).toString('hex');
    const created = await call(server.base, 'POST', '/api/tool-secrets', { body: { projectId, toolName: 'verify_payment', secretKey: 'callback_secret', value: secret } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    try {
      const { sessionId, callbackId } = await suspend('signed_payments', 'INV-7');
      const body = JSON.stringify({ status: 'confirmed' });
      assertError(await postCallback(callbackId, body), 401, 'UNAUTHORIZED', /signature/);
      assertError(await postCallback(callbackId, body, { 'x-callback-signature': signHmacSha256('wrong-secret', body) }), 401, 'UNAUTHORIZED');
      assertError(await postCallback(callbackId, body, { 'x-callback-signature': signHmacSha256(secret, body + ' ') }), 401, 'UNAUTHORIZED');
      // Refused attempts claimed nothing: the right signature still works.
      const ok = await postCallback(callbackId, body, { 'x-callback-signature': signHmacSha256(secret, body) });
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.body, { ok: true });
      assert.equal((await continuationOf(sessionId)).text, 'Payment confirmed for INV-7.');
    } finally {
      await call(server.base, 'DELETE', `/api/tool-secrets/${created.body.secret.id}`);
    }
  });

  test('unknown ids, wrong content types and expired callbacks are refused', async () => {
    assertError(await postCallback('cb_' + 'x'.repeat(32), '{}'), 404, 'NOT_FOUND');
    const { sessionId, callbackId } = await suspend('quick_payments', 'INV-9');
    const text = await call(server.base, 'POST', `/api/v1/callbacks/${callbackId}`, { key: null, body: 'status=ok', headers: { 'content-type': 'text/plain' } });
    assertError(text, 400, 'BAD_REQUEST', /Content-Type/);
    await new Promise((r) => setTimeout(r, 1100));
    assertError(await postCallback(callbackId, '{"status":"late"}'), 404, 'NOT_FOUND', /expired/);
    // The next message resumes the flow with the error value instead.
    const next = await chat(server, { sessionId, message: 'any news?' });
    assert.equal(next.response, 'Verification failed: no answer arrived in time');
  });

  test('an open stream receives the continuation', async () => {
    const res = await fetch(`${server.base}/api/v1/chat/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${(await import('./harness.js')).ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId, agentName: 'payments', message: 'verify INV-5' }),
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let posted = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (!posted && text.includes('event: suspended')) {
        posted = true;
        const callbackId = String(received.at(-1)!.headers['x-parley-callback-id']);
        assert.equal((await postCallback(callbackId, '{"status":"settled"}')).status, 200);
      }
    }
    const events = text.split('\n\n').filter((b) => b.startsWith('event: ')).map((b) => b.slice(7, b.indexOf('\n')));
    assert.deepEqual(events.filter((e) => e !== 'text_delta'), ['session', 'usage', 'complete', 'suspended', 'continuation']);
    assert.match(text, /"response":"Payment settled for INV-5\."/);
  });

  test('a claimed callback whose session had not resumed yet runs after a restart', async () => {
    const { sessionId, callbackId } = await suspend('payments', 'INV-77');
    await server.stop();
    // What the route does before it wakes the session, as if the process died right after.
    const store = new LmdbStore({ path: server.dataDir, durability: 'commit' });
    const claim = await new CallbackStore(store, new SecretBox(server.config.encryptionKeys)).claim(callbackId, { status: 'recovered' });
    assert.equal(claim.outcome, 'claimed');
    await store.close();
    server = await startTestServer({ dataDir: server.dataDir, env: { PARLEY_TOOLS_ALLOW_PRIVATE: 'true', PARLEY_ENCRYPTION_KEYS: ENCRYPTION } });
    assert.equal((await continuationOf(sessionId)).text, 'Payment recovered for INV-77.');
  });
});
