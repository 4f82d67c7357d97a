import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cuid } from '../../runtime/index.js';
import { ContactStore } from '../../actors/index.js';
import { assertError, call, chat, createTenant, deployAgent, startTestServer, type ApiResponse, type TestServer, type TestTenant } from './harness.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const CUID = /^c[0-9a-z]{24}$/;

const FULL = {
  type: 'employee',
  identity: 'ada@example.com',
  identityType: 'email',
  displayName: 'Ada Lovelace',
  department: 'Engineering',
  employeeId: 'E-0001',
  company: 'Analytical Engines Ltd',
  accountRef: 'ACC-42',
  channel: 'web',
  metadata: { tier: 'gold', seats: 3, nested: { ok: true } },
  tags: ['vip', 'beta'],
};

describe('contacts', () => {
  let server: TestServer;
  let B: TestTenant;
  let sessionA: string;
  let sessionA2: string;
  let sessionB: string;

  const post = (body: unknown, key?: string): Promise<ApiResponse> => call(server.base, 'POST', '/api/contacts', { body, key });
  const created = async (body: unknown, key?: string): Promise<any> => {
    const res = await post(body, key);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data;
  };

  before(async () => {
    server = await startTestServer();
    await deployAgent(server, 'greeter');
    sessionA = (await chat(server, { projectId: server.projectId, message: 'hi' })).sessionId;
    sessionA2 = (await chat(server, { projectId: server.projectId, message: 'hello' })).sessionId;
    B = await createTenant(server, 'Tenant B');
    await deployAgent(server, 'greeter', { projectId: B.projectId, key: B.key });
    sessionB = (await chat(server, { projectId: B.projectId, message: 'hi' }, { key: B.key })).sessionId;
  });
  after(async () => {
    await server.close();
  });

  test('create with every field answers 201 and GET returns the same contact', async () => {
    const res = await post(FULL);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    const c = res.body.data;
    for (const [name, value] of Object.entries(FULL)) assert.deepEqual(c[name], value, name);
    assert.match(c.id, CUID);
    assert.equal(c.tenantId, server.parley.bootstrap?.tenant.id);
    assert.match(c.firstSeenAt, ISO);
    assert.match(c.lastSeenAt, ISO);
    assert.match(c.createdAt, ISO);
    assert.equal(c.deletedAt, null);
    assert.equal(c.linkedSessionCount, 0);
    const got = await call(server.base, 'GET', `/api/contacts/${c.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, { success: true, data: c });
  });

  test('every field is optional: an empty body makes an anonymous contact with null fields', async () => {
    const c = await created({});
    for (const name of ['type', 'identity', 'identityType', 'displayName', 'department', 'employeeId', 'company', 'accountRef', 'channel', 'metadata']) {
      assert.equal(c[name], null, name);
    }
    assert.deepEqual(c.tags, []);
  });

  test('each limit: exactly at the limit is accepted, one over is 400 naming the field', async () => {
    const limits: [string, number][] = [
      ['displayName', 200], ['employeeId', 100], ['company', 200], ['department', 200], ['accountRef', 200], ['channel', 100],
    ];
    for (const [field, max] of limits) {
      const ok = await post({ [field]: 'x'.repeat(max) });
      assert.equal(ok.status, 201, `${field} at ${max}: ${JSON.stringify(ok.body)}`);
      assert.equal(ok.body.data[field].length, max);
      const over = await post({ [field]: 'x'.repeat(max + 1) });
      assertError(over, 400, 'VALIDATION_ERROR', new RegExp(`^${field}\\b`));
      assert.equal(over.body.error.details.field, field);
    }
    // identity (ours: 256)
    assert.equal((await post({ identity: 'i'.repeat(256), identityType: 'external' })).status, 201);
    assertError(await post({ identity: 'j'.repeat(257), identityType: 'external' }), 400, 'VALIDATION_ERROR', /^identity\b/);
    // tags: 50 items of 50 characters
    const fifty = Array.from({ length: 50 }, (_, i) => `${String(i).padStart(2, '0')}${'t'.repeat(48)}`);
    const okTags = await post({ tags: fifty });
    assert.equal(okTags.status, 201, JSON.stringify(okTags.body));
    assert.deepEqual(okTags.body.data.tags, fifty);
    const tooMany = await post({ tags: [...fifty, 'one-more'] });
    assertError(tooMany, 400, 'VALIDATION_ERROR', /^tags\b/);
    assert.equal(tooMany.body.error.details.field, 'tags');
    const tooLong = await post({ tags: ['ok', 't'.repeat(51)] });
    assertError(tooLong, 400, 'VALIDATION_ERROR', /^tags\.1\b/);
    assert.equal(tooLong.body.error.details.field, 'tags.1');
  });

  test('bad values are 400: unknown field, unknown type, identity without its type, wrong types', async () => {
    assertError(await post({ nickname: 'x' }), 400, 'VALIDATION_ERROR', /nickname/);
    assertError(await post({ nickname: null }), 400, 'VALIDATION_ERROR', /nickname/);
    assertError(await post({ type: 'robot' }), 400, 'VALIDATION_ERROR', /^type\b/);
    assertError(await post({ identity: 'x@y.z', identityType: 'fax' }), 400, 'VALIDATION_ERROR', /^identityType\b/);
    assertError(await post({ identity: 'x@y.z' }), 400, 'VALIDATION_ERROR', /^identityType\b/);
    assertError(await post({ identityType: 'email' }), 400, 'VALIDATION_ERROR', /^identity\b/);
    assertError(await post({ identity: '', identityType: 'email' }), 400, 'VALIDATION_ERROR', /^identity\b/);
    assertError(await post({ tags: 'vip' }), 400, 'VALIDATION_ERROR', /^tags\b/);
    assertError(await post({ metadata: ['a'] }), 400, 'VALIDATION_ERROR', /^metadata\b/);
    assertError(await post({ displayName: 7 }), 400, 'VALIDATION_ERROR', /^displayName\b/);
  });

  test('identity is unique per tenant and identity type: 409 on a duplicate, fine under another type', async () => {
    await created({ identity: '+15550001', identityType: 'phone' });
    const dup = await post({ identity: '+15550001', identityType: 'phone', displayName: 'Other' });
    assertError(dup, 409, 'CONFLICT');
    const asExternal = await post({ identity: '+15550001', identityType: 'external' });
    assert.equal(asExternal.status, 201);
    // Emails compare without case.
    await created({ identity: 'Case@Example.com', identityType: 'email' });
    assertError(await post({ identity: 'case@example.COM', identityType: 'email' }), 409, 'CONFLICT');
    // Another tenant may hold the same identity.
    const inB = await post({ identity: '+15550001', identityType: 'phone' }, B.key);
    assert.equal(inB.status, 201);
  });

  test('lookup by identity (with and without type); 404 when absent; 400 without identity', async () => {
    const phone = await created({ identity: 'lookup-1', identityType: 'phone', displayName: 'By phone' });
    const ext = await created({ identity: 'lookup-1', identityType: 'external', displayName: 'By external' });
    const byPhone = await call(server.base, 'GET', '/api/contacts/lookup?identity=lookup-1&identityType=phone');
    assert.equal(byPhone.status, 200);
    assert.equal(byPhone.body.success, true);
    assert.equal(byPhone.body.data.id, phone.id);
    const byExt = await call(server.base, 'GET', '/api/contacts/lookup?identity=lookup-1&identityType=external');
    assert.equal(byExt.body.data.id, ext.id);
    // Without a type: email, then phone, then external.
    const any = await call(server.base, 'GET', '/api/contacts/lookup?identity=lookup-1');
    assert.equal(any.body.data.id, phone.id);
    const email = await call(server.base, 'GET', `/api/contacts/lookup?identity=${encodeURIComponent('ADA@example.com')}&identityType=email`);
    assert.equal(email.body.data.displayName, 'Ada Lovelace');
    assertError(await call(server.base, 'GET', '/api/contacts/lookup?identity=nobody'), 404, 'NOT_FOUND', /Contact not found/);
    assertError(await call(server.base, 'GET', '/api/contacts/lookup?identity=lookup-1&identityType=email'), 404, 'NOT_FOUND');
    assertError(await call(server.base, 'GET', '/api/contacts/lookup'), 400, 'VALIDATION_ERROR', /identity/);
    assertError(await call(server.base, 'GET', '/api/contacts/lookup?identity=x&identityType=fax'), 400, 'VALIDATION_ERROR', /identityType/);
  });

  test('PUT changes only the given fields; null clears one; a taken identity is 409; limits apply', async () => {
    const c = await created({ type: 'customer', displayName: 'Before', company: 'Acme', tags: ['a'], identity: 'put-1', identityType: 'external' });
    const res = await call(server.base, 'PUT', `/api/contacts/${c.id}`, { body: { displayName: 'After', company: null } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    const u = res.body.data;
    assert.equal(u.displayName, 'After');
    assert.equal(u.company, null);
    assert.equal(u.type, 'customer');
    assert.deepEqual(u.tags, ['a']);
    assert.equal(u.identity, 'put-1');
    assert.equal(u.createdAt, c.createdAt);
    assert.deepEqual((await call(server.base, 'GET', `/api/contacts/${c.id}`)).body.data, u);

    await created({ identity: 'put-taken', identityType: 'external' });
    assertError(await call(server.base, 'PUT', `/api/contacts/${c.id}`, { body: { identity: 'put-taken' } }), 409, 'CONFLICT');
    // Changing the identity frees the old one.
    const moved = await call(server.base, 'PUT', `/api/contacts/${c.id}`, { body: { identity: 'put-2' } });
    assert.equal(moved.body.data.identity, 'put-2');
    assert.equal(moved.body.data.identityType, 'external');
    assert.equal((await post({ identity: 'put-1', identityType: 'external' })).status, 201);
    assert.equal((await call(server.base, 'GET', '/api/contacts/lookup?identity=put-2&identityType=external')).body.data.id, c.id);
    // Clearing the type but keeping the identity would leave an identity nobody can look up.
    assertError(await call(server.base, 'PUT', `/api/contacts/${c.id}`, { body: { identityType: null } }), 400, 'VALIDATION_ERROR', /^identityType\b/);
    // Clearing both is fine, and frees the identity.
    const cleared = await call(server.base, 'PUT', `/api/contacts/${c.id}`, { body: { identity: null, identityType: null } });
    assert.equal(cleared.body.data.identity, null);
    assertError(await call(server.base, 'GET', '/api/contacts/lookup?identity=put-2'), 404, 'NOT_FOUND');
    assertError(await call(server.base, 'PUT', `/api/contacts/${c.id}`, { body: { employeeId: 'e'.repeat(101) } }), 400, 'VALIDATION_ERROR', /^employeeId\b/);
    assertError(await call(server.base, 'PUT', `/api/contacts/${c.id}`, { body: { tags: Array(51).fill('t') } }), 400, 'VALIDATION_ERROR', /^tags\b/);
    assertError(await call(server.base, 'PUT', `/api/contacts/${cuid()}`, { body: { displayName: 'x' } }), 404, 'NOT_FOUND', /Contact not found/);
  });

  test('pagination: default 50, max 200, offset; limit 201 and 0 are 400; filters by type and channel', async () => {
    const T = await createTenant(server, 'Paging tenant');
    const list = (query = ''): Promise<ApiResponse> => call(server.base, 'GET', `/api/contacts${query}`, { key: T.key });
    for (let i = 0; i < 55; i++) {
      await created({ displayName: `P${i}`, type: i % 5 === 0 ? 'employee' : 'customer', channel: i % 11 === 0 ? 'sms' : 'web' }, T.key);
    }
    const first = await list();
    assert.equal(first.status, 200);
    assert.equal(first.body.success, true);
    assert.equal(first.body.data.length, 50);
    assert.equal(first.body.total, 55);
    assert.equal(first.body.limit, 50);
    assert.equal(first.body.offset, 0);
    // Newest first.
    assert.equal(first.body.data[0].displayName, 'P54');
    const rest = await list('?offset=50');
    assert.deepEqual(rest.body.data.map((c: any) => c.displayName), ['P4', 'P3', 'P2', 'P1', 'P0']);
    assert.equal(rest.body.total, 55);
    const max = await list('?limit=200');
    assert.equal(max.body.data.length, 55);
    assert.equal(max.body.limit, 200);
    assertError(await list('?limit=201'), 400, 'VALIDATION_ERROR', /limit/);
    assertError(await list('?limit=0'), 400, 'VALIDATION_ERROR', /limit/);
    assertError(await list('?offset=-1'), 400, 'VALIDATION_ERROR', /offset/);
    const employees = await list('?type=employee&limit=3');
    assert.equal(employees.body.total, 11);
    assert.equal(employees.body.data.length, 3);
    assert.ok(employees.body.data.every((c: any) => c.type === 'employee'));
    const sms = await list('?channel=sms');
    assert.equal(sms.body.total, 5);
    assert.ok(sms.body.data.every((c: any) => c.channel === 'sms'));
    const both = await list('?channel=sms&type=employee');
    assert.deepEqual(both.body.data.map((c: any) => c.displayName), ['P0']);
    assert.equal(both.body.total, 1);
    assertError(await list('?type=robot'), 400, 'VALIDATION_ERROR', /type/);
  });

  test('soft-delete: hidden from lists and lookup, GET by id shows deletedAt, second delete 404, identity freed', async () => {
    const T = await createTenant(server, 'Delete tenant');
    const c = await created({ identity: 'gone@example.com', identityType: 'email', displayName: 'Gone' }, T.key);
    await created({ displayName: 'Stays' }, T.key);
    const del = await call(server.base, 'DELETE', `/api/contacts/${c.id}`, { key: T.key });
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { success: true });
    const list = await call(server.base, 'GET', '/api/contacts', { key: T.key });
    assert.deepEqual(list.body.data.map((x: any) => x.displayName), ['Stays']);
    assert.equal(list.body.total, 1);
    assertError(await call(server.base, 'GET', '/api/contacts/lookup?identity=gone@example.com', { key: T.key }), 404, 'NOT_FOUND');
    const got = await call(server.base, 'GET', `/api/contacts/${c.id}`, { key: T.key });
    assert.equal(got.status, 200);
    assert.match(got.body.data.deletedAt, ISO);
    assert.equal(got.body.data.displayName, 'Gone');
    assert.equal(got.body.data.identity, 'gone@example.com');
    // The record is kept in the store.
    const stored = new ContactStore(server.parley.deps.store).get(T.tenantId, c.id);
    assert.equal(stored?.deletedAt, got.body.data.deletedAt);
    assertError(await call(server.base, 'DELETE', `/api/contacts/${c.id}`, { key: T.key }), 404, 'NOT_FOUND', /Contact not found/);
    assertError(await call(server.base, 'PUT', `/api/contacts/${c.id}`, { key: T.key, body: { displayName: 'Back' } }), 404, 'NOT_FOUND');
    assertError(await call(server.base, 'POST', `/api/contacts/${c.id}/link-session`, { key: T.key, body: { sessionId: sessionA } }), 404, 'NOT_FOUND', /Contact not found/);
    // The identity can be used again by a new contact.
    const again = await created({ identity: 'gone@example.com', identityType: 'email' }, T.key);
    assert.notEqual(again.id, c.id);
    assertError(await call(server.base, 'DELETE', `/api/contacts/${c.id}`, { key: T.key, body: { force: true } }), 400, 'VALIDATION_ERROR');
  });

  test('link-session: the contact counts the link, the session resolves to the contact, relinking replaces', async () => {
    const first = await created({ displayName: 'First', identity: 'link-1', identityType: 'external' });
    const second = await created({ displayName: 'Second' });
    const link = await call(server.base, 'POST', `/api/contacts/${first.id}/link-session`, { body: { sessionId: sessionA } });
    assert.equal(link.status, 200, JSON.stringify(link.body));
    assert.deepEqual(link.body, { success: true });
    const got = await call(server.base, 'GET', `/api/contacts/${first.id}`);
    assert.equal(got.body.data.linkedSessionCount, 1);
    assert.ok(got.body.data.lastSeenAt >= first.lastSeenAt);
    const contacts = new ContactStore(server.parley.deps.store);
    assert.equal(contacts.contactForSession(got.body.data.tenantId, sessionA)?.id, first.id);
    assert.equal(contacts.contactForSession(got.body.data.tenantId, sessionA2), undefined);
    // Linking the same session twice changes nothing; a second session adds one.
    await call(server.base, 'POST', `/api/contacts/${first.id}/link-session`, { body: { sessionId: sessionA } });
    await call(server.base, 'POST', `/api/contacts/${first.id}/link-session`, { body: { sessionId: sessionA2 } });
    assert.equal((await call(server.base, 'GET', `/api/contacts/${first.id}`)).body.data.linkedSessionCount, 2);
    // One contact per session: relinking moves it.
    const relink = await call(server.base, 'POST', `/api/contacts/${second.id}/link-session`, { body: { sessionId: sessionA } });
    assert.equal(relink.status, 200);
    assert.equal((await call(server.base, 'GET', `/api/contacts/${first.id}`)).body.data.linkedSessionCount, 1);
    assert.equal((await call(server.base, 'GET', `/api/contacts/${second.id}`)).body.data.linkedSessionCount, 1);
    assert.equal(contacts.contactForSession(first.tenantId, sessionA)?.displayName, 'Second');
    assert.equal(contacts.contactForSession(first.tenantId, sessionA2)?.displayName, 'First');
    // Another tenant's session and a missing one are both 404 "Session not found".
    const foreign = await call(server.base, 'POST', `/api/contacts/${first.id}/link-session`, { body: { sessionId: sessionB } });
    const missing = await call(server.base, 'POST', `/api/contacts/${first.id}/link-session`, { body: { sessionId: cuid() } });
    assertError(foreign, 404, 'NOT_FOUND', /Session not found/);
    assertError(missing, 404, 'NOT_FOUND', /Session not found/);
    assert.equal(contacts.contactForSession(B.tenantId, sessionB), undefined);
    assertError(await call(server.base, 'POST', `/api/contacts/${first.id}/link-session`, { body: {} }), 400, 'VALIDATION_ERROR', /sessionId/);
    assertError(await call(server.base, 'POST', `/api/contacts/${first.id}/link-session`, { body: { sessionId: sessionA, extra: 1 } }), 400, 'VALIDATION_ERROR', /extra/);
    // A deleted contact no longer answers for its session.
    await call(server.base, 'DELETE', `/api/contacts/${second.id}`);
    assert.equal(contacts.contactForSession(first.tenantId, sessionA), undefined);
  });

  test("another tenant's contact answers 404 on every route, exactly like a missing one", async () => {
    const a = await created({ identity: 'only-in-a', identityType: 'external', displayName: 'A only' });
    const asB = (method: string, path: string, body?: unknown): Promise<ApiResponse> => call(server.base, method, path, { key: B.key, body });
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/contacts/{id}'],
      ['PUT', '/api/contacts/{id}', { displayName: 'taken over' }],
      ['PUT', '/api/contacts/{id}', {}],
      ['DELETE', '/api/contacts/{id}'],
      ['POST', '/api/contacts/{id}/link-session', { sessionId: sessionB }],
      ['POST', '/api/contacts/{id}/link-session', {}],
    ];
    for (const [method, path, body] of routes) {
      const foreign = await asB(method, path.replace('{id}', a.id), body);
      const missing = await asB(method, path.replace('{id}', cuid()), body);
      assertError(foreign, 404, 'NOT_FOUND', /Contact not found/);
      assertError(missing, 404, 'NOT_FOUND');
      assert.equal(foreign.body.error.message, missing.body.error.message, `${method} ${path}`);
    }
    assertError(await asB('GET', '/api/contacts/lookup?identity=only-in-a'), 404, 'NOT_FOUND');
    const listB = await asB('GET', '/api/contacts?limit=200');
    assert.ok(!listB.body.data.some((c: any) => c.id === a.id));
    assert.ok(listB.body.data.every((c: any) => c.tenantId === B.tenantId));
    // A's contact is untouched.
    const still = await call(server.base, 'GET', `/api/contacts/${a.id}`);
    assert.equal(still.body.data.displayName, 'A only');
    assert.equal(still.body.data.deletedAt, null);
  });

  test('permissions: contact:read lists and reads; writing needs contact:write (403)', async () => {
    const made = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'viewer', role: 'viewer' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const viewer = made.body.key as string;
    const c = await created({ displayName: 'Visible' });
    assert.equal((await call(server.base, 'GET', `/api/contacts/${c.id}`, { key: viewer })).status, 200);
    assert.equal((await call(server.base, 'GET', '/api/contacts', { key: viewer })).status, 200);
    assertError(await post({ displayName: 'nope' }, viewer), 403, 'FORBIDDEN', /contact:write/);
    assertError(await call(server.base, 'PUT', `/api/contacts/${c.id}`, { key: viewer, body: { displayName: 'x' } }), 403, 'FORBIDDEN');
    assertError(await call(server.base, 'DELETE', `/api/contacts/${c.id}`, { key: viewer }), 403, 'FORBIDDEN');
    assertError(await call(server.base, 'POST', `/api/contacts/${c.id}/link-session`, { key: viewer, body: { sessionId: sessionA } }), 403, 'FORBIDDEN');
    assertError(await call(server.base, 'GET', '/api/contacts', { key: null }), 401, 'UNAUTHORIZED');
  });
});
