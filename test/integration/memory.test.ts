import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { SandboxTokens } from '../../actors/index.js';
import { ADMIN_KEY, assertError, call, chat, createTenant, deployAgent, startTestServer, type TestServer } from './harness.js';

/** The server's sandbox JWT secret, known to the test so it can forge tokens. */
const SANDBOX_SECRET = 'integration-test-sandbox-secret-0123456789';
const USER_JWT_SECRET = 'integration-test-user-jwt-secret-0123456789';
const PASSWORD = 'correct horse battery staple';

describe('POST /api/v1/memory', () => {
  let server: TestServer;
  let tokens: SandboxTokens;
  let tenantId: string;
  let sessionA: string;
  let sessionB: string;

  before(async () => {
    server = await startTestServer({ env: { PARLEY_SANDBOX_JWT_SECRET: SANDBOX_SECRET, PARLEY_JWT_SECRET: USER_JWT_SECRET } });
    tokens = new SandboxTokens(server.parley.deps.store, server.config);
    await deployAgent(server, 'greeter');
    const a = await chat(server, { projectId: server.projectId, message: 'hello' });
    const b = await chat(server, { projectId: server.projectId, message: 'hello' });
    sessionA = a.sessionId;
    sessionB = b.sessionId;
    tenantId = server.parley.deps.sessions.byId(sessionA)!.tenantId;
  });
  after(async () => {
    await server.close();
  });

  const tokenFor = (sessionId: string, tenant = tenantId, projectId = server.projectId): Promise<string> => tokens.issue({ tenantId: tenant, projectId, sessionId });
  const memory = (token: string | null, body: unknown) => call(server.base, 'POST', '/api/v1/memory', { key: token, body });
  /** A token signed with the sandbox secret; `claims` and `edit` shape it. */
  const forge = (claims: Record<string, unknown>, edit: (jwt: SignJWT) => SignJWT = (j) => j, secret = SANDBOX_SECRET): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    return edit(new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer('parley').setAudience('parley-sandbox').setIssuedAt(now).setExpirationTime(now + 300))
      .sign(new TextEncoder().encode(secret));
  };

  test('set, get and delete round trip', async () => {
    const token = await tokenFor(sessionA);
    const empty = await memory(token, { action: 'get', memoryStoreName: 'prefs' });
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body, { success: true, data: null });

    const set = await memory(token, { action: 'set', memoryStoreName: 'prefs', payload: { content: { language: 'fr', visits: 2 } } });
    assert.equal(set.status, 200);
    assert.deepEqual(set.body, { success: true });

    const got = await memory(token, { action: 'get', memoryStoreName: 'prefs' });
    assert.deepEqual(got.body, { success: true, data: { language: 'fr', visits: 2 } });

    const deleted = await memory(token, { action: 'delete', memoryStoreName: 'prefs' });
    assert.deepEqual(deleted.body, { success: true, data: { deleted: true } });
    const again = await memory(token, { action: 'delete', memoryStoreName: 'prefs' });
    assert.deepEqual(again.body, { success: true, data: { deleted: false } });
    const gone = await memory(token, { action: 'get', memoryStoreName: 'prefs' });
    assert.deepEqual(gone.body, { success: true, data: null });
  });

  test("a token of another session cannot read this session's memory", async () => {
    await memory(await tokenFor(sessionA), { action: 'set', memoryStoreName: 'secret-notes', payload: { content: { note: 'only A' } } });
    const fromB = await memory(await tokenFor(sessionB), { action: 'get', memoryStoreName: 'secret-notes' });
    assert.equal(fromB.status, 200);
    assert.deepEqual(fromB.body, { success: true, data: null });
    const fromA = await memory(await tokenFor(sessionA), { action: 'get', memoryStoreName: 'secret-notes' });
    assert.deepEqual(fromA.body.data, { note: 'only A' });
  });

  describe('400', () => {
    test('missing action or memoryStoreName', async () => {
      const token = await tokenFor(sessionA);
      assertError(await memory(token, { memoryStoreName: 'prefs' }), 400, 'VALIDATION_ERROR', /action and memoryStoreName are required/);
      assertError(await memory(token, { action: 'get' }), 400, 'VALIDATION_ERROR', /action and memoryStoreName are required/);
      assertError(await memory(token, { action: 'get', memoryStoreName: '' }), 400, 'VALIDATION_ERROR');
      assertError(await memory(token, {}), 400, 'VALIDATION_ERROR');
    });

    test('token lacks sessionId', async () => {
      const token = await forge({ tenantId, projectId: server.projectId });
      assertError(await memory(token, { action: 'get', memoryStoreName: 'prefs' }), 400, 'BAD_REQUEST', /lacks a sessionId/);
    });

    test('unknown action', async () => {
      assertError(await memory(await tokenFor(sessionA), { action: 'list', memoryStoreName: 'prefs' }), 400, 'VALIDATION_ERROR', /Unknown action "list"/);
    });

    test('set without payload.content, and unknown fields', async () => {
      const token = await tokenFor(sessionA);
      assertError(await memory(token, { action: 'set', memoryStoreName: 'prefs' }), 400, 'VALIDATION_ERROR', /payload.content/);
      assertError(await memory(token, { action: 'set', memoryStoreName: 'prefs', payload: {} }), 400, 'VALIDATION_ERROR', /payload.content/);
      assertError(await memory(token, { action: 'get', memoryStoreName: 'prefs', sessionId: sessionB }), 400, 'VALIDATION_ERROR', /Unknown field "sessionId"/);
    });
  });

  describe('401', () => {
    const body = { action: 'get', memoryStoreName: 'prefs' };

    test('no token, a malformed token, a wrong signature, an expired token', async () => {
      assertError(await memory(null, body), 401, 'UNAUTHORIZED');
      assertError(await memory('not-a-jwt', body), 401, 'UNAUTHORIZED', /Invalid sandbox token/);
      assertError(await memory(await forge({ tenantId, sessionId: sessionA }, (j) => j, 'another-secret-of-at-least-32-characters'), body), 401, 'UNAUTHORIZED');
      const expired = await forge({ tenantId, sessionId: sessionA }, (j) => j.setIssuedAt(1_000).setExpirationTime(2_000));
      assertError(await memory(expired, body), 401, 'UNAUTHORIZED', /expired/);
      assertError(await memory(await forge({ tenantId, sessionId: sessionA }, (j) => j.setAudience('parley-api')), body), 401, 'UNAUTHORIZED');
    });

    test('a user API key or a user JWT is refused', async () => {
      assertError(await memory(ADMIN_KEY, body), 401, 'UNAUTHORIZED');
      const created = await call(server.base, 'POST', '/api/users', { body: { email: 'mem@example.com', password: PASSWORD, role: 'developer' } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const login = await call(server.base, 'POST', '/api/auth/login', { key: null, body: { email: 'mem@example.com', password: PASSWORD } });
      assert.equal(login.status, 200, JSON.stringify(login.body));
      assert.equal(typeof login.body.token, 'string');
      assertError(await memory(login.body.token, body), 401, 'UNAUTHORIZED');
    });

    test('a sandbox token is refused by the user API', async () => {
      const res = await call(server.base, 'GET', '/api/projects', { key: await tokenFor(sessionA) });
      assertError(res, 401, 'UNAUTHORIZED');
    });
  });

  describe('404 no active memory bridge', () => {
    const body = { action: 'get', memoryStoreName: 'prefs' };

    test('for a session that does not exist', async () => {
      assertError(await memory(await tokenFor('cmissingsession000000000'), body), 404, 'NOT_FOUND', /No active memory bridge/);
    });

    test("for a session of another tenant (a token naming this tenant and that tenant's session)", async () => {
      const other = await createTenant(server, 'Other Co');
      await deployAgent(server, 'greeter', { projectId: other.projectId, key: other.key });
      const otherSession = await chat(server, { projectId: other.projectId, message: 'hello' }, { key: other.key });
      assertError(await memory(await tokenFor(otherSession.sessionId), body), 404, 'NOT_FOUND', /No active memory bridge/);
      // The right tenant with the wrong project is no bridge either.
      assertError(await memory(await tokenFor(sessionA, tenantId, other.projectId), body), 404, 'NOT_FOUND');
    });
  });
});

describe('POST /api/v1/memory with sandbox auth off', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ env: { PARLEY_SANDBOX_JWT_SECRET: 'off' } });
  });
  after(async () => {
    await server.close();
  });

  test('answers 503 sandbox auth not configured', async () => {
    const res = await call(server.base, 'POST', '/api/v1/memory', { key: 'anything', body: { action: 'get', memoryStoreName: 'prefs' } });
    assertError(res, 503, 'SERVICE_UNAVAILABLE', /Sandbox auth is not configured/);
  });
});
