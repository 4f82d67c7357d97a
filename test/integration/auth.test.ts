import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { ADMIN_KEY, assertError, call, startTestServer, type TestServer } from './harness.js';

/** The server's JWT secret, known to the test so it can forge tokens. */
const JWT_SECRET = 'integration-test-jwt-secret-0123456789abcdef';
const SECRET_BYTES = new TextEncoder().encode(JWT_SECRET);
const PASSWORD = 'correct horse battery staple';

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('authentication and permissions', () => {
  let server: TestServer;
  let tenantId: string;
  let user: { id: string; email: string; role: string };

  before(async () => {
    server = await startTestServer({ env: { PARLEY_JWT_SECRET: JWT_SECRET } });
    const projects = await call(server.base, 'GET', '/api/projects');
    tenantId = projects.body.projects[0].tenantId;
    const created = await call(server.base, 'POST', '/api/users', { body: { email: 'Dev@Example.com', password: PASSWORD, role: 'developer' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    user = created.body.user;
    const agent = await call(server.base, 'POST', `/api/projects/${server.projectId}/agents`, { body: { name: 'greeter', dslContent: 'AGENT: greeter\nFALLBACK: "hi"' } });
    assert.equal(agent.status, 201);
  });
  after(async () => {
    await server.close();
  });

  /** GET /api/projects with the given headers and no default key. */
  const projectsWith = (headers: Record<string, string>) => call(server.base, 'GET', '/api/projects', { key: null, headers });
  const bearer = (token: string) => projectsWith({ authorization: `Bearer ${token}` });

  /** A token signed with the server's secret; `edit` changes it before signing. */
  async function forge(edit: (jwt: SignJWT) => SignJWT = (j) => j, alg = 'HS256'): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT({ tid: tenantId }).setProtectedHeader({ alg, typ: 'JWT' }).setSubject(user.id).setIssuer('parley').setAudience('parley-api').setIssuedAt(now).setExpirationTime(now + 600);
    return edit(jwt).sign(SECRET_BYTES);
  }

  describe('credentials', () => {
    test('no credentials: 401 UNAUTHORIZED', async () => {
      assertError(await projectsWith({}), 401, 'UNAUTHORIZED');
    });

    test('a wrong prl_ key: 401, in either header', async () => {
      assertError(await bearer('prl_wrong_key_0123456789abcdef'), 401, 'UNAUTHORIZED');
      assertError(await projectsWith({ 'x-api-key': 'prl_wrong_key_0123456789abcdef' }), 401, 'UNAUTHORIZED');
      // The right key with one character changed.
      assertError(await bearer(ADMIN_KEY.slice(0, -1) + 'X'), 401, 'UNAUTHORIZED');
    });

    test('X-API-Key works', async () => {
      const res = await projectsWith({ 'x-api-key': ADMIN_KEY });
      assert.equal(res.status, 200);
      assert.equal(res.body.success, true);
      assert.equal(res.body.projects[0].id, server.projectId);
    });

    test('Authorization: Bearer prl_… works', async () => {
      const res = await bearer(ADMIN_KEY);
      assert.equal(res.status, 200);
      assert.equal(res.body.projects[0].id, server.projectId);
    });

    test('both headers at once: 401, even when both are valid', async () => {
      const res = await projectsWith({ authorization: `Bearer ${ADMIN_KEY}`, 'x-api-key': ADMIN_KEY });
      assertError(res, 401, 'UNAUTHORIZED', /one credential/);
    });

    test('a malformed Authorization header: 401', async () => {
      for (const value of [`Basic ${Buffer.from('a:b').toString('base64')}`, 'Bearer', `Token ${ADMIN_KEY}`, `Bearer ${ADMIN_KEY} extra`]) {
        assertError(await projectsWith({ authorization: value }), 401, 'UNAUTHORIZED');
      }
    });
  });

  describe('login', () => {
    test('a user logs in and the JWT works; the role is the user’s', async () => {
      const login = await call(server.base, 'POST', '/api/auth/login', { key: null, body: { email: 'dev@example.com', password: PASSWORD } });
      assert.equal(login.status, 200, JSON.stringify(login.body));
      assert.equal(login.body.success, true);
      assert.equal(login.body.tokenType, 'Bearer');
      assert.match(login.body.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.ok(Date.parse(login.body.expiresAt) > Date.now());
      assert.deepEqual(login.body.user, { id: user.id, email: 'dev@example.com', role: 'developer', tenantId });
      const header = JSON.parse(Buffer.from(login.body.token.split('.')[0], 'base64url').toString());
      assert.equal(header.alg, 'HS256');

      const projects = await bearer(login.body.token);
      assert.equal(projects.status, 200);
      assert.equal(projects.body.projects[0].id, server.projectId);
      // A developer may not manage users.
      assertError(await call(server.base, 'GET', '/api/users', { key: login.body.token }), 403, 'FORBIDDEN');
    });

    test('wrong password and unknown email: 401 with the same message', async () => {
      const wrong = await call(server.base, 'POST', '/api/auth/login', { key: null, body: { email: 'dev@example.com', password: 'not the password at all' } });
      const unknown = await call(server.base, 'POST', '/api/auth/login', { key: null, body: { email: 'nobody@example.com', password: PASSWORD } });
      assertError(wrong, 401, 'UNAUTHORIZED');
      assertError(unknown, 401, 'UNAUTHORIZED');
      assert.equal(wrong.body.error.message, unknown.body.error.message);
      assert.equal(wrong.body.token, undefined);
    });

    test('a login body with unknown fields is refused', async () => {
      const res = await call(server.base, 'POST', '/api/auth/login', { key: null, body: { email: 'dev@example.com', password: PASSWORD, role: 'admin' } });
      assertError(res, 400, 'VALIDATION_ERROR', /role/);
    });
  });

  describe('JWT attacks', () => {
    test('alg "none" is refused', async () => {
      const now = Math.floor(Date.now() / 1000);
      const payload = { sub: user.id, tid: tenantId, iss: 'parley', aud: 'parley-api', iat: now, exp: now + 600 };
      for (const alg of ['none', 'None', 'NONE']) {
        assertError(await bearer(`${b64url({ alg, typ: 'JWT' })}.${b64url(payload)}.`), 401, 'UNAUTHORIZED');
      }
      // The same unsigned token with a bogus signature.
      assertError(await bearer(`${b64url({ alg: 'none' })}.${b64url(payload)}.AAAA`), 401, 'UNAUTHORIZED');
    });

    test('HS256 signed with a wrong secret is refused', async () => {
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ tid: tenantId }).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuer('parley').setAudience('parley-api').setExpirationTime(now + 600)
        .sign(new TextEncoder().encode('a-completely-different-secret-0123456789'));
      assertError(await bearer(token), 401, 'UNAUTHORIZED');
    });

    test('expired, wrong issuer, wrong audience, HS512, missing sub, missing exp: all 401', async () => {
      const now = Math.floor(Date.now() / 1000);
      const cases: [string, Promise<string>][] = [
        ['expired', forge((j) => j.setIssuedAt(now - 7200).setExpirationTime(now - 3600))],
        ['wrong issuer', forge((j) => j.setIssuer('someone-else'))],
        ['wrong audience', forge((j) => j.setAudience('another-api'))],
        ['HS512', forge((j) => j, 'HS512')],
        ['HS384', forge((j) => j, 'HS384')],
        ['missing sub', new SignJWT({ tid: tenantId }).setProtectedHeader({ alg: 'HS256' }).setIssuer('parley').setAudience('parley-api').setExpirationTime(now + 600).sign(SECRET_BYTES)],
        ['missing exp', new SignJWT({ tid: tenantId }).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuer('parley').setAudience('parley-api').sign(SECRET_BYTES)],
        ['missing tid', new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuer('parley').setAudience('parley-api').setExpirationTime(now + 600).sign(SECRET_BYTES)],
        ['unknown user', forge((j) => j.setSubject('c' + '1'.repeat(24)))],
        ['wrong tenant', new SignJWT({ tid: 'c' + '2'.repeat(24) }).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuer('parley').setAudience('parley-api').setExpirationTime(now + 600).sign(SECRET_BYTES)],
      ];
      for (const [name, tokenPromise] of cases) {
        const res = await bearer(await tokenPromise);
        assert.equal(res.status, 401, `${name}: ${res.status} ${JSON.stringify(res.body)}`);
        assertError(res, 401, 'UNAUTHORIZED');
      }
    });

    test('a correctly self-signed token for an existing user is accepted', async () => {
      const res = await bearer(await forge());
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.projects[0].id, server.projectId);
    });

    test('a token whose payload was altered after signing is refused', async () => {
      const [h, , s] = (await forge()).split('.');
      const now = Math.floor(Date.now() / 1000);
      const tampered = b64url({ sub: user.id, tid: tenantId, iss: 'parley', aud: 'parley-api', exp: now + 99999, role: 'admin' });
      assertError(await bearer(`${h}.${tampered}.${s}`), 401, 'UNAUTHORIZED');
    });
  });

  describe('roles and API keys', () => {
    async function newKey(body: Record<string, unknown>, key?: string): Promise<{ id: string; key: string; apiKey: any }> {
      const res = await call(server.base, 'POST', '/api/api-keys', { key, body });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return { id: res.body.apiKey.id, key: res.body.key, apiKey: res.body.apiKey };
    }

    test('a viewer key: 403 FORBIDDEN on PUT dsl, 200 on GET /api/agents', async () => {
      const viewer = await newKey({ name: 'viewer key', role: 'viewer' });
      assert.equal(viewer.apiKey.role, 'viewer');
      assert.match(viewer.key, /^prl_/);
      const put = await call(server.base, 'PUT', `/api/projects/${server.projectId}/agents/greeter/dsl`, { key: viewer.key, body: { dslContent: 'AGENT: greeter\nFALLBACK: "changed"' } });
      assertError(put, 403, 'FORBIDDEN', /agent:write/);
      const agents = await call(server.base, 'GET', '/api/agents', { key: viewer.key });
      assert.equal(agents.status, 200);
      assert.equal(agents.body.success, true);
      assert.ok(agents.body.agents.some((a: { name: string }) => a.name === 'greeter'));
      // The refused write changed nothing.
      const detail = await call(server.base, 'GET', `/api/projects/${server.projectId}/agents/greeter`);
      assert.equal(detail.body.agent.dslContent, 'AGENT: greeter\nFALLBACK: "hi"');
      // Nor may a viewer chat or create keys.
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { key: viewer.key, body: { projectId: server.projectId, message: 'hi' } }), 403, 'FORBIDDEN');
      assertError(await call(server.base, 'POST', '/api/api-keys', { key: viewer.key, body: { name: 'x' } }), 403, 'FORBIDDEN');
    });

    test('an API key with a subset of its role’s permissions has exactly that subset', async () => {
      const subset = await newKey({ name: 'read agents only', role: 'developer', permissions: ['agent:read'] });
      assert.deepEqual(subset.apiKey.permissions, ['agent:read']);
      const agents = await call(server.base, 'GET', '/api/agents', { key: subset.key });
      assert.equal(agents.status, 200);
      const detail = await call(server.base, 'GET', `/api/projects/${server.projectId}/agents/greeter`, { key: subset.key });
      assert.equal(detail.status, 200);
      assertError(await call(server.base, 'GET', '/api/projects', { key: subset.key }), 403, 'FORBIDDEN', /project:read/);
      assertError(await call(server.base, 'PUT', `/api/projects/${server.projectId}/agents/greeter/dsl`, { key: subset.key, body: { dslContent: 'AGENT: greeter' } }), 403, 'FORBIDDEN');
    });

    test('permissions beyond the role are refused with 403', async () => {
      const res = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'sneaky', role: 'viewer', permissions: ['agent:read', 'agent:write'] } });
      assertError(res, 403, 'FORBIDDEN', /agent:write/);
      assert.deepEqual(res.body.error.details.permissions, ['agent:write']);
      assert.equal(res.body.key, undefined);
      const chatRole = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'sneaky2', role: 'chat', permissions: ['session:read'] } });
      assertError(chatRole, 403, 'FORBIDDEN');
      const list = await call(server.base, 'GET', '/api/api-keys');
      assert.equal(list.body.apiKeys.some((k: { name: string }) => k.name.startsWith('sneaky')), false);
    });

    test('a key cannot grant more than the credential that creates it', async () => {
      const limited = await newKey({ name: 'key manager', role: 'admin', permissions: ['apikey:manage', 'agent:read'] });
      const res = await call(server.base, 'POST', '/api/api-keys', { key: limited.key, body: { name: 'escalate', role: 'developer', permissions: ['agent:write'] } });
      assertError(res, 403, 'FORBIDDEN', /agent:write/);
      // Without a permissions list the role's full set is requested: also beyond the creator.
      assertError(await call(server.base, 'POST', '/api/api-keys', { key: limited.key, body: { name: 'escalate2', role: 'viewer' } }), 403, 'FORBIDDEN');
      const ok = await call(server.base, 'POST', '/api/api-keys', { key: limited.key, body: { name: 'fine', role: 'viewer', permissions: ['agent:read'] } });
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
      assert.deepEqual(ok.body.apiKey.permissions, ['agent:read']);
    });

    test('the key is in the create response only; the list never holds the key or its hash', async () => {
      const made = await newKey({ name: 'listed key', role: 'chat' });
      assert.match(made.key, /^prl_[A-Za-z0-9_-]{16,}$/);
      assert.equal(made.apiKey.key, undefined);
      assert.equal(made.apiKey.hash, undefined);
      assert.ok(made.key.startsWith(made.apiKey.prefix));
      const list = await call(server.base, 'GET', '/api/api-keys');
      assert.equal(list.status, 200);
      const entry = list.body.apiKeys.find((k: { id: string }) => k.id === made.id);
      assert.ok(entry, 'the new key is listed');
      assert.deepEqual(Object.keys(entry).sort(), ['createdAt', 'createdBy', 'id', 'name', 'permissions', 'prefix', 'role']);
      assert.equal(entry.role, 'chat');
      const text = JSON.stringify(list.body);
      for (const secret of [made.key, ADMIN_KEY]) {
        assert.equal(text.includes(secret), false, 'a key appears in the list');
        assert.equal(text.includes(createHash('sha256').update(secret).digest('hex')), false, 'a key hash appears in the list');
        assert.equal(text.includes(createHash('sha256').update(secret).digest('base64')), false, 'a key hash appears in the list');
      }
    });

    test('a deleted key stops working at once (401); deleting it again is 404', async () => {
      const doomed = await newKey({ name: 'doomed', role: 'developer' });
      assert.equal((await call(server.base, 'GET', '/api/projects', { key: doomed.key })).status, 200);
      const del = await call(server.base, 'DELETE', `/api/api-keys/${doomed.id}`);
      assert.equal(del.status, 200);
      assert.deepEqual(del.body, { success: true });
      assertError(await call(server.base, 'GET', '/api/projects', { key: doomed.key }), 401, 'UNAUTHORIZED');
      assertError(await projectsWith({ 'x-api-key': doomed.key }), 401, 'UNAUTHORIZED');
      assertError(await call(server.base, 'DELETE', `/api/api-keys/${doomed.id}`), 404, 'NOT_FOUND');
      const list = await call(server.base, 'GET', '/api/api-keys');
      assert.equal(list.body.apiKeys.some((k: { id: string }) => k.id === doomed.id), false);
    });
  });
});
