import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY, assertError, call, rawRequest, type RawResponse, type TestServer } from '../integration/harness.js';
import { startSecurityServer } from './fixture.js';

/**
 * Hostile bytes at every layer a request passes: body size, JSON syntax, nesting, key count,
 * encoding, control characters, URL and header length, and encoded path traversal. Each answers
 * 4xx with the envelope, and the server keeps serving.
 */
describe('security: hostile input', () => {
  let server: TestServer;
  const json = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };

  before(async () => {
    server = await startSecurityServer();
  });
  after(async () => {
    await server.close();
  });

  /** The envelope of a raw response, checked like assertError does for fetch responses. */
  function assertRawError(res: RawResponse, status: number, code: string, what: string): void {
    assert.equal(res.status, status, `${what}: ${res.status} ${res.text.slice(0, 300)}`);
    assert.equal(res.body?.success, false, what);
    assert.equal(res.body?.error?.code, code, `${what}: ${res.text.slice(0, 300)}`);
    assert.equal(typeof res.body?.error?.message, 'string');
    assert.equal(res.body?.error?.requestId, res.headers['x-request-id']);
  }
  const post = (path: string, body: string | Buffer, headers: Record<string, string> = json): Promise<RawResponse> =>
    rawRequest(server.base, { method: 'POST', path, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, chunks: [body] });

  async function assertHealthy(): Promise<void> {
    const res = await call(server.base, 'GET', '/api/projects');
    assert.equal(res.status, 200);
    assert.equal(res.body.projects[0].id, server.projectId);
  }

  test('a body of 1 MB + 1 byte answers 413 on every JSON write route of the standard limit', async () => {
    const routes = server.parley.app.router.routes().filter((r) => r.method !== 'GET' && r.method !== 'DELETE' && r.bodyLimit === undefined && !r.path.includes('{'));
    assert.ok(routes.length >= 5);
    const big = '{"name":"' + 'x'.repeat(1024 * 1024 + 1 - 11) + '"}';
    assert.equal(Buffer.byteLength(big), 1024 * 1024 + 1);
    for (const route of routes) {
      const res = await rawRequest(server.base, { method: route.method, path: route.path, headers: { ...json, 'content-length': String(big.length) }, chunks: [big] });
      assertRawError(res, 413, 'PAYLOAD_TOO_LARGE', `${route.method} ${route.path}`);
    }
    await assertHealthy();
  });

  test('malformed JSON in many shapes answers 400 BAD_REQUEST', async () => {
    for (const body of ['{', '{"name":', "{'name':'x'}", '{"name":"x",}', 'null', '[]', '"text"', '{"name":"x"}{"name":"y"}', '\u0000', '{"a":1e999999}x']) {
      assertRawError(await post('/api/projects', body), 400, 'BAD_REQUEST', JSON.stringify(body));
    }
    await assertHealthy();
  });

  test('nesting 10,000 levels deep (arrays and objects) answers 400, not a stack overflow', async () => {
    const arrays = '{"name":' + '['.repeat(10_000) + ']'.repeat(10_000) + '}';
    const objects = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    assertRawError(await post('/api/projects', arrays), 400, 'BAD_REQUEST', 'arrays');
    assertRawError(await post('/api/projects', objects), 400, 'BAD_REQUEST', 'objects');
    assertRawError(await post('/api/v1/chat/send', objects), 400, 'BAD_REQUEST', 'objects on chat');
    await assertHealthy();
  });

  test('a body with 60,000 keys answers 400 naming an unknown field', async () => {
    const body = JSON.stringify(Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 0])));
    assert.ok(body.length < 1024 * 1024);
    const res = await post('/api/projects', body);
    assertRawError(res, 400, 'VALIDATION_ERROR', '60k keys');
    await assertHealthy();
  });

  test('invalid UTF-8 bytes answer 400; nothing is stored with replacement characters', async () => {
    const before = (await call(server.base, 'GET', '/api/projects')).body.projects.length;
    for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]]) {
      const body = Buffer.concat([Buffer.from('{"name":"bad'), Buffer.from(bad), Buffer.from('"}')]);
      assertRawError(await post('/api/projects', body), 400, 'BAD_REQUEST', `bytes ${bad.join(',')}`);
    }
    assert.equal((await call(server.base, 'GET', '/api/projects')).body.projects.length, before);
  });

  test('NUL: a raw NUL byte is invalid JSON (400); an escaped one is refused where a name is required and kept intact where text is free', async () => {
    assertRawError(await post('/api/projects', '{"name":"a\u0000b"}'), 400, 'BAD_REQUEST', 'raw NUL');
    const agent = await call(server.base, 'POST', `/api/projects/${server.projectId}/agents`, { body: { name: 'a\u0000b', dslContent: 'AGENT: a' } });
    assertError(agent, 400, 'VALIDATION_ERROR');
    const project = await call(server.base, 'POST', '/api/projects', { body: { name: 'a\u0000b', slug: 'nul-name' } });
    assert.equal(project.status, 201, JSON.stringify(project.body));
    const read = await call(server.base, 'GET', `/api/projects/${project.body.project.id}`);
    assert.equal(read.body.project.name, 'a\u0000b', 'the string round-trips unchanged (no truncation at NUL)');
  });

  test('very long URLs, path parameters and query values answer 4xx, not 500', async () => {
    for (const n of [600, 8_000, 60_000]) {
      const long = 'a'.repeat(n);
      for (const path of [`/api/projects/${long}`, `/api/projects/${server.projectId}/agents/${long}`, `/api/${long}`, `/api/agents?projectId=${long}`, `/api/tool-secrets?projectId=${long}`, `/api/contacts/lookup?identity=${long}`, `/api/projects/${server.projectId}/sessions/${long}/messages`]) {
        const res = await rawRequest(server.base, { method: 'GET', path, headers: json });
        assert.ok(res.status >= 400 && res.status < 500, `GET ${path.slice(0, 60)}… (${n}): ${res.status} ${res.text.slice(0, 200)}`);
        if (res.body?.error) assert.equal(res.body.success, false);
      }
    }
    await assertHealthy();
  });

  test('very long header values: credentials 401, content type 400, request id replaced, others ignored', async () => {
    const huge = 'b'.repeat(16_000);
    const auth = await rawRequest(server.base, { method: 'GET', path: '/api/projects', headers: { authorization: `Bearer prl_${huge}` } });
    assertRawError(auth, 401, 'UNAUTHORIZED', 'long bearer');
    const apiKey = await rawRequest(server.base, { method: 'GET', path: '/api/projects', headers: { 'x-api-key': huge } });
    assertRawError(apiKey, 401, 'UNAUTHORIZED', 'long x-api-key');
    const jwt = await rawRequest(server.base, { method: 'GET', path: '/api/projects', headers: { authorization: `Bearer ${huge}.${huge}.${huge}` } });
    assertRawError(jwt, 401, 'UNAUTHORIZED', 'long jwt');
    const type = await post('/api/projects', '{"name":"x"}', { authorization: json.authorization, 'content-type': `application/${huge}` });
    assertRawError(type, 400, 'BAD_REQUEST', 'long content-type');
    const requestId = await rawRequest(server.base, { method: 'GET', path: '/api/projects', headers: { ...json, 'x-request-id': huge } });
    assert.equal(requestId.status, 200);
    assert.ok(String(requestId.headers['x-request-id']).length < 100, 'a junk request id is replaced');
    // Past uWS's header buffer the request is not served at all (431 or a closed connection).
    const enormous = await rawRequest(server.base, { method: 'GET', path: '/api/projects', headers: { ...json, 'x-junk': 'c'.repeat(300_000) } }).then((r) => r.status, () => 'closed');
    assert.ok(enormous === 431 || enormous === 'closed', `300 kB header: ${enormous}`);
    await assertHealthy();
  });

  test('encoded path traversal in path parameters names nothing (404); dot segments never skip authentication', async () => {
    for (const evil of ['..%2F..%2Fapi-keys', '..%2f', '%2e%2e%2F%2e%2e%2Fusers', '..%5C..%5Capi-keys', '%252e%252e%252f', '..', '.']) {
      const res = await rawRequest(server.base, { method: 'GET', path: `/api/projects/${evil}`, headers: json });
      assert.ok(res.status === 404 || res.status === 200, `${evil}: ${res.status}`);
      if (res.status === 404) assertRawError(res, 404, 'NOT_FOUND', evil);
      else assert.deepEqual(res.body, (await call(server.base, 'GET', '/api/projects')).body, `${evil} resolved to another route`);
      const agent = await rawRequest(server.base, { method: 'GET', path: `/api/projects/${server.projectId}/agents/${evil}`, headers: json });
      assert.ok(agent.status === 404 || agent.status === 200, `${evil} (agent): ${agent.status}`);
    }
    // A dot-segment path is resolved like a browser would, and still needs credentials.
    const anonymous = await rawRequest(server.base, { method: 'GET', path: `/api/projects/${server.projectId}/../../api-keys` });
    assertRawError(anonymous, 401, 'UNAUTHORIZED', 'dot segments without credentials');
    await assertHealthy();
  });
});
