import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, call, startTestServer, type TestServer } from './harness.js';

describe('health and the error envelope', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  test('GET /healthz answers 200 {status:"ok"} without credentials', async () => {
    const res = await call(server.base, 'GET', '/healthz', { key: null });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  });

  test('GET /readyz answers 200 with every check true', async () => {
    const res = await call(server.base, 'GET', '/readyz', { key: null });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ready');
    assert.deepEqual(res.body.checks, { store: true, workers: true });
  });

  test('every response carries a fresh X-Request-Id (success, error, unauthenticated)', async () => {
    const responses = await Promise.all([
      call(server.base, 'GET', '/healthz', { key: null }),
      call(server.base, 'GET', '/api/projects'),
      call(server.base, 'GET', '/api/projects', { key: null }),
      call(server.base, 'GET', '/no/such/route', { key: null }),
      call(server.base, 'POST', '/api/projects', { body: '{bad json' }),
    ]);
    assert.deepEqual(responses.map((r) => r.status), [200, 200, 401, 404, 400]);
    const ids = responses.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) assert.match(id ?? '', /^[A-Za-z0-9._:-]{8,128}$/);
    assert.equal(new Set(ids).size, ids.length, 'request ids are unique');
    // Errors carry the same id in the envelope.
    for (const r of responses.slice(2)) assert.equal(r.body.error.requestId, r.headers.get('x-request-id'));
  });

  test("a caller's sane X-Request-Id is echoed, in the header and in the error envelope", async () => {
    const ok = await call(server.base, 'GET', '/healthz', { key: null, headers: { 'x-request-id': 'trace-abc.123:XYZ' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('x-request-id'), 'trace-abc.123:XYZ');
    const err = await call(server.base, 'GET', '/api/projects', { key: null, headers: { 'x-request-id': 'caller-request-0001' } });
    assertError(err, 401, 'UNAUTHORIZED');
    assert.equal(err.body.error.requestId, 'caller-request-0001');
  });

  test('a junk X-Request-Id is replaced by a fresh one (logs cannot be forged)', async () => {
    for (const junk of ['short', 'has spaces in it ok', 'x'.repeat(200), 'inject\u00e9<script>']) {
      const res = await call(server.base, 'GET', '/healthz', { key: null, headers: { 'x-request-id': junk } });
      assert.equal(res.status, 200);
      const id = res.headers.get('x-request-id') ?? '';
      assert.notEqual(id, junk);
      assert.match(id, /^[A-Za-z0-9._:-]{8,128}$/);
    }
  });

  test('an unknown route answers the 404 envelope', async () => {
    for (const path of ['/nope', '/api/nope', '/api/projects/x/y/z/w', '/api/v2/chat/send']) {
      const res = await call(server.base, 'GET', path, { key: null });
      assertError(res, 404, 'NOT_FOUND');
    }
    // Authenticated or not, an unknown route is the same 404.
    const authed = await call(server.base, 'POST', '/api/nothing-here', { body: { a: 1 } });
    assertError(authed, 404, 'NOT_FOUND');
  });

  test('an unknown method on a known path answers 404', async () => {
    const cases: [string, string][] = [
      ['DELETE', '/healthz'],
      ['POST', '/readyz'],
      ['PUT', '/api/projects'],
      ['DELETE', `/api/projects/${server.projectId}`],
      ['GET', '/api/v1/chat/send'],
      ['PATCH', '/api/auth/login'],
    ];
    for (const [method, path] of cases) {
      const res = await call(server.base, method, path);
      assertError(res, 404, 'NOT_FOUND');
    }
  });

  test('the server answers normally after the error cases', async () => {
    const res = await call(server.base, 'GET', '/api/projects');
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.equal(res.body.projects[0].id, server.projectId);
  });
});
