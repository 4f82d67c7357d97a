import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY, ADMIN_TOKEN, assertError, call, startTestServer, type TestServer } from './harness.js';

describe('operator API: POST /api/admin/tenants', () => {
  let server: TestServer;
  let disabled: TestServer;
  before(async () => {
    server = await startTestServer();
    disabled = await startTestServer({ env: { PARLEY_ADMIN_TOKEN: '' } });
  });
  after(async () => {
    await server.close();
    await disabled.close();
  });

  test('the right operator token creates a tenant, its project and a working admin key', async () => {
    const res = await call(server.base, 'POST', '/api/admin/tenants', { key: ADMIN_TOKEN, body: { name: 'Acme' } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    assert.match(res.body.tenant.id, /^c[0-9a-z]{24}$/);
    assert.equal(res.body.tenant.name, 'Acme');
    assert.match(res.body.project.id, /^c[0-9a-z]{24}$/);
    assert.equal(res.body.project.tenantId, res.body.tenant.id);
    assert.match(res.body.apiKey.key, /^prl_/);
    assert.equal(res.body.apiKey.role, 'admin');
    assert.equal(typeof res.body.apiKey.id, 'string');
    assert.equal(res.body.admin, undefined);

    const key: string = res.body.apiKey.key;
    const projects = await call(server.base, 'GET', '/api/projects', { key });
    assert.equal(projects.status, 200);
    assert.deepEqual(projects.body.projects.map((p: { id: string }) => p.id), [res.body.project.id]);
    assert.equal(projects.body.projects[0].tenantId, res.body.tenant.id);
    assert.notEqual(res.body.project.id, server.projectId);
    // The bootstrap tenant does not see the new one either.
    const own = await call(server.base, 'GET', '/api/projects');
    assert.deepEqual(own.body.projects.map((p: { id: string }) => p.id), [server.projectId]);
    // The new key is an admin of its own tenant: it can manage keys there.
    const keys = await call(server.base, 'GET', '/api/api-keys', { key });
    assert.equal(keys.status, 200);
    assert.deepEqual(keys.body.apiKeys.map((k: { id: string }) => k.id), [res.body.apiKey.id]);
  });

  test('an admin user can be created with the tenant and logs in', async () => {
    const res = await call(server.base, 'POST', '/api/admin/tenants', {
      key: ADMIN_TOKEN, body: { name: 'With admin', adminEmail: 'owner@tenant.example', adminPassword: 'a-very-long-password' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.admin.email, 'owner@tenant.example');
    const login = await call(server.base, 'POST', '/api/auth/login', { key: null, body: { email: 'owner@tenant.example', password: 'a-very-long-password' } });
    assert.equal(login.status, 200);
    assert.equal(login.body.user.tenantId, res.body.tenant.id);
    assert.equal(login.body.user.role, 'admin');
  });

  test('a wrong operator token, a tenant API key or none: 401', async () => {
    const projectsBefore = (await call(server.base, 'GET', '/api/projects')).body.projects.length;
    for (const key of ['wrong-operator-token-000000000', ADMIN_TOKEN + 'x', ADMIN_TOKEN.slice(0, -1), ADMIN_KEY, null]) {
      const res = await call(server.base, 'POST', '/api/admin/tenants', { key, body: { name: 'Intruder' } });
      assertError(res, 401, 'UNAUTHORIZED');
      assert.equal(res.body.tenant, undefined);
    }
    assert.equal((await call(server.base, 'GET', '/api/projects')).body.projects.length, projectsBefore);
  });

  test('the body is validated (unknown fields, empty name): 400', async () => {
    assertError(await call(server.base, 'POST', '/api/admin/tenants', { key: ADMIN_TOKEN, body: { name: 'X', tenantId: 'c' + '0'.repeat(24) } }), 400, 'VALIDATION_ERROR', /tenantId/);
    assertError(await call(server.base, 'POST', '/api/admin/tenants', { key: ADMIN_TOKEN, body: { name: '' } }), 400, 'VALIDATION_ERROR');
    assertError(await call(server.base, 'POST', '/api/admin/tenants', { key: ADMIN_TOKEN, body: {} }), 400, 'VALIDATION_ERROR', /name/);
  });

  test('a server without PARLEY_ADMIN_TOKEN answers 404 on that route, like an unknown route', async () => {
    for (const key of [ADMIN_TOKEN, ADMIN_KEY, null]) {
      const res = await call(disabled.base, 'POST', '/api/admin/tenants', { key, body: { name: 'Nope' } });
      assertError(res, 404, 'NOT_FOUND');
    }
    const unknown = await call(disabled.base, 'POST', '/api/admin/nothing', { key: ADMIN_TOKEN, body: { name: 'Nope' } });
    assertError(unknown, 404, 'NOT_FOUND');
    const res = await call(disabled.base, 'POST', '/api/admin/tenants', { key: ADMIN_TOKEN, body: { name: 'Nope' } });
    assert.equal(res.body.error.message.replace('/api/admin/tenants', '/api/admin/nothing'), unknown.body.error.message);
    // The rest of that server works.
    const projects = await call(disabled.base, 'GET', '/api/projects');
    assert.equal(projects.status, 200);
    assert.equal(projects.body.projects.length, 1);
  });
});
