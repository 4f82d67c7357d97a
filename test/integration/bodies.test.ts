import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY, assertError, call, rawRequest, startTestServer, type TestServer } from './harness.js';

const LIMIT = 1024 * 1024;

describe('request bodies', () => {
  let server: TestServer;
  let agentsPath: string;
  before(async () => {
    server = await startTestServer();
    agentsPath = `/api/projects/${server.projectId}/agents`;
  });
  after(async () => {
    await server.close();
  });

  const auth = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };

  /** A JSON body of exactly `size` bytes: {"name":"a","dslContent":"xxxx…"}. */
  function bodyOfSize(size: number): string {
    const head = '{"name":"big_agent","dslContent":"';
    const tail = '"}';
    return head + 'x'.repeat(size - head.length - tail.length) + tail;
  }

  test('a body over 1 MB with a declared Content-Length answers 413 PAYLOAD_TOO_LARGE', async () => {
    const body = Buffer.from(bodyOfSize(LIMIT + 1));
    const res = await rawRequest(server.base, {
      method: 'POST', path: agentsPath,
      headers: { ...auth, 'content-length': String(body.length), 'x-request-id': 'too-large-declared' },
      chunks: [body],
    });
    assert.equal(res.status, 413);
    assert.equal(res.body.success, false);
    assert.equal(res.body.error.code, 'PAYLOAD_TOO_LARGE');
    assert.match(res.body.error.message, /larger than/);
    assert.equal(res.body.error.requestId, 'too-large-declared');
    assert.equal(res.headers['x-request-id'], 'too-large-declared');
  });

  test('a chunked body without Content-Length is counted while it arrives: 413 once past 1 MB', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const chunks: Buffer[] = [Buffer.from('{"name":"big_agent","dslContent":"')];
    for (let sent = 0; sent <= LIMIT + chunk.length; sent += chunk.length) chunks.push(chunk);
    chunks.push(Buffer.from('"}'));
    const res = await rawRequest(server.base, {
      method: 'POST', path: agentsPath,
      headers: { ...auth, 'transfer-encoding': 'chunked', 'x-request-id': 'too-large-chunked' },
      chunks,
    });
    assert.equal(res.status, 413);
    assert.equal(res.body.success, false);
    assert.equal(res.body.error.code, 'PAYLOAD_TOO_LARGE');
    assert.equal(res.body.error.requestId, 'too-large-chunked');
    // Nothing was created.
    const list = await call(server.base, 'GET', agentsPath);
    assert.equal(list.status, 200);
    assert.equal(list.body.agents.some((a: { name: string }) => a.name === 'big_agent'), false);
  });

  test('a chunked body under the limit is accepted (the limit is not "any chunked body")', async () => {
    const res = await rawRequest(server.base, {
      method: 'POST', path: agentsPath,
      headers: { ...auth, 'transfer-encoding': 'chunked' },
      chunks: ['{"name":"chunked_ok",', '"dslContent":"AGENT: chunked_ok\\nFALLBACK: \\"ok\\""', '}'],
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.agent.name, 'chunked_ok');
  });

  test('a body of exactly 1 MB is not refused for its size', async () => {
    const res = await rawRequest(server.base, {
      method: 'POST', path: agentsPath,
      headers: { ...auth, 'content-length': String(LIMIT) },
      chunks: [Buffer.from(bodyOfSize(LIMIT))],
    });
    // The body is within the limit: whatever the verdict on its content, it is not a 413.
    assert.notEqual(res.status, 413, res.text.slice(0, 300));
    assert.ok([201, 400].includes(res.status), `status ${res.status}`);
  });

  test('malformed JSON answers 400 BAD_REQUEST', async () => {
    for (const text of ['{', '{"name":', 'not json', '{"a":1,}', "{'a':1}"]) {
      const res = await call(server.base, 'POST', agentsPath, { body: text });
      assertError(res, 400, 'BAD_REQUEST', /JSON/);
    }
  });

  test('a wrong or missing content type answers 400 BAD_REQUEST', async () => {
    const text = JSON.stringify({ name: 'typed', dslContent: 'AGENT: typed' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
      const res = await call(server.base, 'POST', agentsPath, { body: text, headers: { 'content-type': type } });
      assertError(res, 400, 'BAD_REQUEST', /Content-Type/);
    }
    const none = await rawRequest(server.base, { method: 'POST', path: agentsPath, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-length': String(Buffer.byteLength(text)) }, chunks: [text] });
    assert.equal(none.status, 400);
    assert.equal(none.body.error.code, 'BAD_REQUEST');
    // application/json with a charset is fine.
    const ok = await call(server.base, 'POST', agentsPath, { body: text, headers: { 'content-type': 'application/json; charset=utf-8' } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });

  test('a __proto__ key answers 400 and pollutes nothing', async () => {
    const res = await call(server.base, 'POST', agentsPath, { body: '{"__proto__":{"x":1},"name":"a"}' });
    assertError(res, 400, 'BAD_REQUEST', /__proto__/);
    const nested = await call(server.base, 'POST', '/api/projects', { body: '{"name":"p","meta":{"deep":{"__proto__":{"isAdmin":true}}}}' });
    assertError(nested, 400, 'BAD_REQUEST', /__proto__/);
    assert.equal(({} as Record<string, unknown>)['x'], undefined);
    assert.equal(({} as Record<string, unknown>)['isAdmin'], undefined);
  });

  test('constructor.prototype answers 400', async () => {
    const res = await call(server.base, 'POST', agentsPath, { body: '{"constructor":{"prototype":{"x":1}},"name":"a","dslContent":"x"}' });
    assertError(res, 400, 'BAD_REQUEST', /constructor/);
    const prototype = await call(server.base, 'POST', agentsPath, { body: '{"name":"a","dslContent":"x","x":{"prototype":{"y":1}}}' });
    assertError(prototype, 400, 'BAD_REQUEST', /prototype/);
  });

  test('nesting 100 levels deep answers 400', async () => {
    const deep = '{"name":"a","dslContent":"x","d":' + '{"a":'.repeat(100) + '1' + '}'.repeat(100) + '}';
    const res = await call(server.base, 'POST', agentsPath, { body: deep });
    assertError(res, 400, 'BAD_REQUEST', /nested deeper/);
    const arrays = await call(server.base, 'POST', agentsPath, { body: '{"d":' + '['.repeat(100) + ']'.repeat(100) + '}' });
    assertError(arrays, 400, 'BAD_REQUEST', /nested deeper/);
  });

  test('a JSON array (or any non-object) at the top level answers 400', async () => {
    for (const text of ['[{"name":"a","dslContent":"x"}]', '"a string"', '42', 'null', 'true']) {
      const res = await call(server.base, 'POST', agentsPath, { body: text });
      assertError(res, 400, 'BAD_REQUEST', /JSON object/);
    }
  });

  test('unknown fields (mass assignment of tenantId, id) answer 400 VALIDATION_ERROR naming the field', async () => {
    const other = 'c' + '0'.repeat(24);
    for (const field of ['tenantId', 'id', 'versionCount', 'projectId']) {
      const res = await call(server.base, 'POST', agentsPath, { body: { name: `mass_${field.toLowerCase()}`, dslContent: 'AGENT: x', [field]: field === 'versionCount' ? 9 : other } });
      assertError(res, 400, 'VALIDATION_ERROR');
      assert.match(res.body.error.message, new RegExp(`"${field}"`));
      assert.equal(res.body.error.details.field, field);
    }
    // None of them was created.
    const list = await call(server.base, 'GET', agentsPath);
    assert.deepEqual(list.body.agents.filter((a: { name: string }) => a.name.startsWith('mass_')), []);
    // Same rule on other bodies: a user cannot be given a tenant.
    const user = await call(server.base, 'POST', '/api/users', { body: { email: 'm@example.com', password: 'a-long-password-1', role: 'viewer', tenantId: other } });
    assertError(user, 400, 'VALIDATION_ERROR', /tenantId/);
    // Routes that take no body refuse one with fields instead of ignoring it (and accept {}).
    await call(server.base, 'POST', agentsPath, { body: { name: 'no_body', dslContent: 'AGENT: no_body\nFALLBACK: "ok"' } });
    const forged = await call(server.base, 'POST', `${agentsPath}/no_body/versions`, { body: { version: 99, evil: true } });
    assertError(forged, 400, 'VALIDATION_ERROR', /"version"/);
    const plain = await call(server.base, 'POST', `${agentsPath}/no_body/versions`, { body: {} });
    assert.equal(plain.status, 201);
    assert.equal(plain.body.version.version, 1);
  });

  test('the server still works after all of that', async () => {
    const health = await call(server.base, 'GET', '/healthz', { key: null });
    assert.equal(health.status, 200);
    const created = await call(server.base, 'POST', agentsPath, { body: { name: 'after_all', dslContent: 'AGENT: after_all\nFALLBACK: "ok"' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.agent.name, 'after_all');
    const list = await call(server.base, 'GET', agentsPath);
    assert.equal(list.status, 200);
    assert.ok(list.body.agents.some((a: { name: string }) => a.name === 'after_all'));
  });
});
