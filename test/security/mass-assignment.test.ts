import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Route } from '../../gateway/router.js';
import { ADMIN_KEY, ADMIN_TOKEN, call, type TestServer } from '../integration/harness.js';
import { createResources, fillPath, plausibleBody, startSecurityServer, type TenantResources } from './fixture.js';

/** Fields a caller must never set: the server owns them. Values are chosen to be recognisable. */
const INJECTED: Record<string, unknown> = {
  tenantId: 'c111111111111111111111111',
  role: 'owner',
  id: 'c222222222222222222222222',
  createdAt: '1999-01-01T00:00:00.000Z',
  version: 999,
};

/** Every string and number anywhere in a JSON value. */
function leaves(value: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const v of value) leaves(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) leaves(v, out);
  else out.push(value);
  return out;
}

/**
 * For every POST, PUT and PATCH route (tenant and operator), a valid body plus one server-owned
 * field must answer 400 VALIDATION_ERROR naming that field; a route that accepts the body must
 * not have stored the value.
 */
describe('security: mass assignment on every write route', () => {
  let server: TestServer;
  let A: TenantResources;
  let routes: Route[];

  before(async () => {
    server = await startSecurityServer();
    routes = server.parley.app.router.routes().filter((r) => (r.auth === 'principal' || r.auth === 'admin') && (r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH'));
    A = await createResources(server, routes.filter((r) => r.auth === 'principal'));
    A['tenantId'] = { a: (await call(server.base, 'GET', '/api/projects')).body.projects[0].tenantId, ghost: 'c000000000000000000000000' };
  });
  after(async () => {
    await server.close();
  });

  test('server-owned fields are refused (400 naming the field) or never stored', async () => {
    assert.ok(routes.length >= 12, `only ${routes.length} write routes`);
    let n = 0;
    const refused: string[] = [];
    for (const route of routes) {
      const id = `${route.method} ${route.path}`;
      if (route.body === 'raw') continue; // the body is a document (an export), not fields of a record
      for (const [field, value] of Object.entries(INJECTED)) {
        const base = route.body === 'none' ? {} : plausibleBody(route, A, ++n);
        assert.ok(base, `${id}: add a plausible body for it in test/security/fixture.ts`);
        // A field the route itself defines (role of a new key or user) is part of its API, not an injection.
        if (field in base) continue;
        const res = await call(server.base, route.method, fillPath(route.path, A, 'a'), { key: route.auth === 'admin' ? ADMIN_TOKEN : ADMIN_KEY, body: { ...base, [field]: value } });
        const what = `${id} with ${field}: ${res.status} ${JSON.stringify(res.body)}`;
        if (res.status === 400) {
          assert.equal(res.body.error.code, 'VALIDATION_ERROR', what);
          assert.equal(res.body.error.details?.field, field, what);
          assert.match(res.body.error.message, new RegExp(field), what);
          refused.push(id);
        } else {
          assert.ok(res.status < 300 || res.status === 409, what);
          assert.equal(leaves(res.body).includes(value), false, `${what}: the injected value was taken`);
        }
      }
    }
    assert.ok(refused.length > routes.length, 'most write routes refuse unknown fields');
  });

  test('nested injections: a record inside metadata is data, not the record itself', async () => {
    const res = await call(server.base, 'POST', '/api/v1/chat/send', { body: { projectId: A['projectId']!.a, agentName: 'a_only', message: 'hi', metadata: { tenantId: INJECTED['tenantId'], role: 'admin' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const session = await call(server.base, 'GET', `/api/projects/${A['projectId']!.a}/sessions/${res.body.sessionId}`);
    // Readable by A in A's project: the session was not filed under the injected tenant.
    assert.equal(session.status, 200, JSON.stringify(session.body));
    assert.equal(session.body.session.sessionId, res.body.sessionId);
  });
});
