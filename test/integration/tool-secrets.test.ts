import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cuid, SecretBox, type EncryptionKey } from '../../runtime/index.js';
import { ToolSecretStore, type ToolSecretRecord } from '../../actors/index.js';
import { ADMIN_KEY, ADMIN_TOKEN, assertError, call, createTenant, startTestServer, type ApiResponse, type TestServer, type TestTenant } from './harness.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const CUID = /^c[0-9a-z]{24}$/;
const K1 = randomBytes(32);
const K2 = randomBytes(32);
const keysEnv = (...keys: [string, Buffer][]): string => keys.map(([id, key]) => `${id}:${key.toString('base64')}`).join(',');

/** A plaintext no other text in a response could contain by chance. */
const plaintext = (label: string): string => `pl41n-${label}-${randomBytes(12).toString('hex')}`;

/** Asserts that neither the value nor its base64 appears anywhere in a raw response. */
async function rawExcludes(res: Response, value: string): Promise<string> {
  const text = await res.text();
  assert.ok(!text.includes(value), 'value appears in the response');
  assert.ok(!text.includes(Buffer.from(value).toString('base64')), 'value appears base64-encoded in the response');
  return text;
}

describe('tool secrets', () => {
  let server: TestServer;
  let B: TestTenant;
  let tenantA: string;
  let P: string;
  const keysFromConfig = (): EncryptionKey[] => server.config.encryptionKeys;
  const store = (): ToolSecretStore => new ToolSecretStore(server.parley.deps.store, new SecretBox(keysFromConfig()));
  const create = (body: Record<string, unknown>, key?: string): Promise<ApiResponse> => call(server.base, 'POST', '/api/tool-secrets', { body: { projectId: P, ...body }, key });

  before(async () => {
    server = await startTestServer({ env: { PARLEY_ENCRYPTION_KEYS: keysEnv(['k1', K1]) } });
    P = server.projectId;
    tenantA = server.parley.bootstrap!.tenant.id;
    B = await createTenant(server, 'Tenant B');
  });
  after(async () => {
    await server.close();
  });

  test('create answers 201 with metadata only; the value is in no response', async () => {
    const value = plaintext('create');
    const res = await fetch(`${server.base}/api/tool-secrets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: P, toolName: 'crm', secretKey: 'apiKey', value, expiresAt: '2099-01-01T00:00:00Z' }),
    });
    assert.equal(res.status, 201);
    const body = JSON.parse(await rawExcludes(res, value));
    assert.equal(body.success, true);
    const s = body.secret;
    assert.match(s.id, CUID);
    assert.equal(s.toolName, 'crm');
    assert.equal(s.secretKey, 'apiKey');
    assert.equal(s.environment, 'dev');
    assert.equal(s.version, 1);
    assert.equal(s.expiresAt, '2099-01-01T00:00:00.000Z');
    assert.match(s.createdAt, ISO);
    assert.equal(s.updatedAt, s.createdAt);
    assert.deepEqual(Object.keys(s).sort(), ['createdAt', 'environment', 'expiresAt', 'id', 'projectId', 'secretKey', 'toolName', 'updatedAt', 'version']);
    // The tool can read it in its environment, and only there.
    assert.equal(store().resolve(tenantA, P, 'dev', 'crm', 'apiKey'), value);
    assert.equal(store().resolve(tenantA, P, 'production', 'crm', 'apiKey'), undefined);
    assert.equal(store().resolve(tenantA, P, 'dev', 'crm', 'otherKey'), undefined);
    assert.equal(store().resolve(B.tenantId, P, 'dev', 'crm', 'apiKey'), undefined);
  });

  test('the LMDB record holds ciphertext with its key id, never the plaintext', async () => {
    const value = plaintext('at-rest');
    const res = await create({ toolName: 'vault', secretKey: 'token', value, environment: 'staging' });
    assert.equal(res.status, 201);
    const id = res.body.secret.id as string;
    const records = server.parley.deps.store.collection<ToolSecretRecord>('toolSecrets').range({ prefix: [tenantA, P] });
    const record = records.find((e) => e.value.id === id)!.value;
    assert.ok(record, 'record found');
    const raw = JSON.stringify(records.map((e) => e.value));
    assert.ok(!raw.includes(value), 'plaintext in the stored records');
    assert.ok(!raw.includes(Buffer.from(value).toString('base64')));
    assert.equal(record.sealed.kid, 'k1');
    assert.ok(record.sealed.data.length > value.length);
    // The ciphertext is bound to its tenant and id: moved onto another secret it does not open.
    const box = new SecretBox(keysFromConfig());
    assert.equal(box.open(record.sealed, `tool-secret:${tenantA}:${id}`), value);
    assert.throws(() => box.open(record.sealed, `tool-secret:${tenantA}:${cuid()}`), (e: any) => e.code === 'INTERNAL_ERROR');
  });

  test('409 when toolName + secretKey + environment already exist; another environment or project is fine', async () => {
    assert.equal((await create({ toolName: 'dup', secretKey: 'k', value: 'v1' })).status, 201);
    const dup = await create({ toolName: 'dup', secretKey: 'k', value: 'v2', environment: 'dev' });
    assertError(dup, 409, 'CONFLICT');
    assert.ok(!JSON.stringify(dup.body).includes('v2'));
    assert.equal((await create({ toolName: 'dup', secretKey: 'k', value: 'v3', environment: 'production' })).status, 201);
    assert.equal((await create({ toolName: 'dup', secretKey: 'k2', value: 'v4' })).status, 201);
    assert.equal((await create({ toolName: 'dup2', secretKey: 'k', value: 'v5' })).status, 201);
    const other = await call(server.base, 'POST', '/api/projects', { body: { name: 'Second project' } });
    assert.equal(other.status, 201, JSON.stringify(other.body));
    assert.equal((await create({ projectId: other.body.project.id, toolName: 'dup', secretKey: 'k', value: 'v6' })).status, 201);
  });

  test('400s: missing fields, value over 16,384, names over 256, bad environment and expiresAt, unknown fields', async () => {
    const base = { toolName: 't', secretKey: 'k', value: 'v' };
    for (const field of ['toolName', 'secretKey', 'value']) {
      const body: Record<string, unknown> = { ...base };
      delete body[field];
      assertError(await create(body), 400, 'VALIDATION_ERROR', new RegExp(field));
    }
    assertError(await call(server.base, 'POST', '/api/tool-secrets', { body: base }), 400, 'VALIDATION_ERROR', /projectId/);
    assertError(await create({ ...base, value: '' }), 400, 'VALIDATION_ERROR', /^value\b/);
    // Exactly at each limit is accepted.
    const atLimit = await create({ toolName: 't'.repeat(256), secretKey: 'k'.repeat(256), value: 'v'.repeat(16_384) });
    assert.equal(atLimit.status, 201, JSON.stringify(atLimit.body));
    assert.equal(store().resolve(tenantA, P, 'dev', 't'.repeat(256), 'k'.repeat(256)), 'v'.repeat(16_384));
    const longValue = await create({ ...base, value: 'v'.repeat(16_385) });
    assertError(longValue, 400, 'VALIDATION_ERROR', /^value\b/);
    assert.equal(longValue.body.error.details.field, 'value');
    assertError(await create({ ...base, toolName: 't'.repeat(257) }), 400, 'VALIDATION_ERROR', /^toolName\b/);
    assertError(await create({ ...base, secretKey: 'k'.repeat(257) }), 400, 'VALIDATION_ERROR', /^secretKey\b/);
    assertError(await create({ ...base, environment: 'qa' }), 400, 'VALIDATION_ERROR', /^environment\b/);
    assertError(await create({ ...base, expiresAt: 'tomorrow' }), 400, 'VALIDATION_ERROR', /^expiresAt\b/);
    assertError(await create({ ...base, expiresAt: '2030-01-01' }), 400, 'VALIDATION_ERROR', /^expiresAt\b/);
    assertError(await create({ ...base, version: 7 }), 400, 'VALIDATION_ERROR', /version/);
    assertError(await create({ ...base, value: 12345 }), 400, 'VALIDATION_ERROR', /^value\b/);
  });

  test('list: metadata with updatedAt, filters, page and limit; projectId required', async () => {
    const T = await createTenant(server, 'List tenant');
    const mk = (body: Record<string, unknown>): Promise<ApiResponse> => call(server.base, 'POST', '/api/tool-secrets', { key: T.key, body: { projectId: T.projectId, ...body } });
    const values: string[] = [];
    for (let i = 0; i < 7; i++) {
      const value = plaintext(`list${i}`);
      values.push(value);
      const res = await mk({ toolName: i < 4 ? 'alpha' : 'beta', secretKey: `key${i}`, value, environment: i % 2 === 0 ? 'dev' : 'production' });
      assert.equal(res.status, 201);
    }
    const list = (query: string): Promise<Response> => fetch(`${server.base}/api/tool-secrets?projectId=${T.projectId}${query}`, { headers: { authorization: `Bearer ${T.key}` } });
    const all = await list('');
    assert.equal(all.status, 200);
    const text = await all.text();
    for (const v of values) assert.ok(!text.includes(v), 'a value appears in the list');
    const body = JSON.parse(text);
    assert.equal(body.success, true);
    assert.equal(body.total, 7);
    assert.equal(body.page, 1);
    assert.equal(body.limit, 50);
    assert.deepEqual(body.secrets.map((s: any) => s.secretKey), ['key0', 'key1', 'key2', 'key3', 'key4', 'key5', 'key6']);
    for (const s of body.secrets) {
      assert.match(s.updatedAt, ISO);
      assert.equal(s.version, 1);
      assert.equal(s.value, undefined);
      assert.equal(s.sealed, undefined);
    }
    const page2 = JSON.parse(await (await list('&page=2&limit=3')).text());
    assert.deepEqual(page2.secrets.map((s: any) => s.secretKey), ['key3', 'key4', 'key5']);
    assert.equal(page2.total, 7);
    assert.equal(page2.page, 2);
    assert.equal(page2.limit, 3);
    const alpha = JSON.parse(await (await list('&toolName=alpha')).text());
    assert.deepEqual(alpha.secrets.map((s: any) => s.secretKey), ['key0', 'key1', 'key2', 'key3']);
    assert.equal(alpha.total, 4);
    const prodBeta = JSON.parse(await (await list('&toolName=beta&environment=production')).text());
    assert.deepEqual(prodBeta.secrets.map((s: any) => s.secretKey), ['key5']);
    assert.equal(prodBeta.total, 1);
    const devPage = JSON.parse(await (await list('&environment=dev&page=2&limit=3')).text());
    assert.deepEqual(devPage.secrets.map((s: any) => s.secretKey), ['key6']);
    assert.equal(devPage.total, 4);
    const call200 = await call(server.base, 'GET', `/api/tool-secrets?projectId=${T.projectId}&limit=200`, { key: T.key });
    assert.equal(call200.status, 200);
    assertError(await call(server.base, 'GET', `/api/tool-secrets?projectId=${T.projectId}&limit=201`, { key: T.key }), 400, 'VALIDATION_ERROR', /limit/);
    assertError(await call(server.base, 'GET', `/api/tool-secrets?projectId=${T.projectId}&page=0`, { key: T.key }), 400, 'VALIDATION_ERROR', /page/);
    assertError(await call(server.base, 'GET', `/api/tool-secrets?projectId=${T.projectId}&environment=qa`, { key: T.key }), 400, 'VALIDATION_ERROR', /environment/);
    assertError(await call(server.base, 'GET', '/api/tool-secrets', { key: T.key }), 400, 'VALIDATION_ERROR', /projectId/);
  });

  test('rotation: PUT seals the new value, version + 1, expiresAt kept unless given; the new value resolves', async () => {
    const v1 = plaintext('rot1');
    const made = await create({ toolName: 'rotor', secretKey: 'key', value: v1, environment: 'production', expiresAt: '2098-05-05T10:00:00+02:00' });
    assert.equal(made.status, 201);
    assert.equal(made.body.secret.expiresAt, '2098-05-05T08:00:00.000Z');
    const id = made.body.secret.id as string;
    const v2 = plaintext('rot2');
    const res = await fetch(`${server.base}/api/tool-secrets/${id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ value: v2 }),
    });
    assert.equal(res.status, 200);
    const text = await rawExcludes(res, v2);
    assert.ok(!text.includes(v1));
    const rotated = JSON.parse(text);
    assert.equal(rotated.success, true);
    assert.equal(rotated.secret.id, id);
    assert.equal(rotated.secret.version, 2);
    assert.equal(rotated.secret.expiresAt, '2098-05-05T08:00:00.000Z');
    assert.equal(rotated.secret.createdAt, made.body.secret.createdAt);
    assert.ok(rotated.secret.updatedAt >= made.body.secret.updatedAt);
    assert.equal(store().resolve(tenantA, P, 'production', 'rotor', 'key'), v2);
    const again = await call(server.base, 'PUT', `/api/tool-secrets/${id}`, { body: { value: plaintext('rot3'), expiresAt: null } });
    assert.equal(again.body.secret.version, 3);
    assert.equal(again.body.secret.expiresAt, null);
    const listed = await call(server.base, 'GET', `/api/tool-secrets?projectId=${P}&toolName=rotor`);
    assert.equal(listed.body.secrets[0].version, 3);
    assertError(await call(server.base, 'PUT', `/api/tool-secrets/${id}`, { body: {} }), 400, 'VALIDATION_ERROR', /value/);
    assertError(await call(server.base, 'PUT', `/api/tool-secrets/${id}`, { body: { value: 'x'.repeat(16_385) } }), 400, 'VALIDATION_ERROR', /^value\b/);
    assertError(await call(server.base, 'PUT', `/api/tool-secrets/${id}`, { body: { value: 'x', toolName: 'renamed' } }), 400, 'VALIDATION_ERROR', /toolName/);
    assertError(await call(server.base, 'PUT', `/api/tool-secrets/${cuid()}`, { body: { value: 'x' } }), 404, 'NOT_FOUND', /Tool secret not found/);
  });

  test('expired secrets are listed but never served to tools', async () => {
    const made = await create({ toolName: 'old', secretKey: 'key', value: 'stale', expiresAt: '2001-01-01T00:00:00Z' });
    assert.equal(made.status, 201);
    assert.equal(store().resolve(tenantA, P, 'dev', 'old', 'key'), undefined);
    const listed = await call(server.base, 'GET', `/api/tool-secrets?projectId=${P}&toolName=old`);
    assert.equal(listed.body.secrets[0].expiresAt, '2001-01-01T00:00:00.000Z');
    // Rotating with a future expiry serves it again.
    await call(server.base, 'PUT', `/api/tool-secrets/${made.body.secret.id}`, { body: { value: 'fresh', expiresAt: '2099-01-01T00:00:00Z' } });
    assert.equal(store().resolve(tenantA, P, 'dev', 'old', 'key'), 'fresh');
  });

  test('delete: {success:true}; the secret is gone from list and resolve; a second delete is 404', async () => {
    const made = await create({ toolName: 'bye', secretKey: 'key', value: 'v' });
    const id = made.body.secret.id as string;
    const del = await call(server.base, 'DELETE', `/api/tool-secrets/${id}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { success: true });
    assert.equal(store().resolve(tenantA, P, 'dev', 'bye', 'key'), undefined);
    const listed = await call(server.base, 'GET', `/api/tool-secrets?projectId=${P}&toolName=bye`);
    assert.equal(listed.body.total, 0);
    assertError(await call(server.base, 'DELETE', `/api/tool-secrets/${id}`), 404, 'NOT_FOUND', /Tool secret not found/);
    // The name is free again.
    assert.equal((await create({ toolName: 'bye', secretKey: 'key', value: 'v2' })).status, 201);
  });

  test("another tenant's secrets and projects answer 404 on every route, like missing ones", async () => {
    const made = await create({ toolName: 'mine', secretKey: 'key', value: 'a-only' });
    const id = made.body.secret.id as string;
    const asB = (method: string, path: string, body?: unknown): Promise<ApiResponse> => call(server.base, method, path, { key: B.key, body });
    const pairs: [ApiResponse, ApiResponse][] = [
      [await asB('PUT', `/api/tool-secrets/${id}`, { value: 'hijack' }), await asB('PUT', `/api/tool-secrets/${cuid()}`, { value: 'hijack' })],
      [await asB('PUT', `/api/tool-secrets/${id}`, {}), await asB('PUT', `/api/tool-secrets/${cuid()}`, {})],
      [await asB('DELETE', `/api/tool-secrets/${id}`), await asB('DELETE', `/api/tool-secrets/${cuid()}`)],
      [await asB('GET', `/api/tool-secrets?projectId=${P}`), await asB('GET', `/api/tool-secrets?projectId=${cuid()}`)],
      [
        await asB('POST', '/api/tool-secrets', { projectId: P, toolName: 'x', secretKey: 'y', value: 'z' }),
        await asB('POST', '/api/tool-secrets', { projectId: cuid(), toolName: 'x', secretKey: 'y', value: 'z' }),
      ],
    ];
    for (const [foreign, missing] of pairs) {
      assertError(foreign, 404, 'NOT_FOUND');
      assertError(missing, 404, 'NOT_FOUND');
      assert.equal(foreign.body.error.message, missing.body.error.message);
    }
    assert.equal(store().resolve(tenantA, P, 'dev', 'mine', 'key'), 'a-only');
    const still = await call(server.base, 'GET', `/api/tool-secrets?projectId=${P}&toolName=mine`);
    assert.equal(still.body.secrets[0].version, 1);
    assert.equal(store().resolve(B.tenantId, P, 'dev', 'x', 'y'), undefined);
  });

  test('permissions: credential:read lists, credential:write creates, rotates and deletes', async () => {
    const readOnly = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'reader', role: 'developer', permissions: ['credential:read'] } });
    assert.equal(readOnly.status, 201, JSON.stringify(readOnly.body));
    const reader = readOnly.body.key as string;
    const made = await create({ toolName: 'perm', secretKey: 'key', value: 'v' });
    assert.equal((await call(server.base, 'GET', `/api/tool-secrets?projectId=${P}`, { key: reader })).status, 200);
    assertError(await create({ toolName: 'perm2', secretKey: 'key', value: 'v' }, reader), 403, 'FORBIDDEN', /credential:write/);
    assertError(await call(server.base, 'PUT', `/api/tool-secrets/${made.body.secret.id}`, { key: reader, body: { value: 'x' } }), 403, 'FORBIDDEN');
    assertError(await call(server.base, 'DELETE', `/api/tool-secrets/${made.body.secret.id}`, { key: reader }), 403, 'FORBIDDEN');
    const viewer = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'viewer', role: 'viewer' } });
    assertError(await call(server.base, 'GET', `/api/tool-secrets?projectId=${P}`, { key: viewer.body.key }), 403, 'FORBIDDEN', /credential:read/);
  });
});

describe('tool secrets: master key rotation', () => {
  test('with a new key first, old secrets still resolve; rotation PUT and the operator re-seal move them to it', async () => {
    let server = await startTestServer({ env: { PARLEY_ENCRYPTION_KEYS: keysEnv(['k1', K1]) } });
    const dataDir = server.dataDir;
    try {
      const tenantId = server.parley.bootstrap!.tenant.id;
      const make = async (secretKey: string, value: string): Promise<string> => {
        const res = await call(server.base, 'POST', '/api/tool-secrets', { body: { projectId: server.projectId, toolName: 'crm', secretKey, value } });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.secret.id;
      };
      const kept = await make('kept', 'survives rotation');
      const rotated = await make('rotated', 'before rotation');
      const kidOf = (id: string): string => server.parley.deps.store.collection<ToolSecretRecord>('toolSecrets').get([tenantId, server.projectId, id])!.sealed.kid;
      const resolve = (secretKey: string): string | undefined =>
        new ToolSecretStore(server.parley.deps.store, new SecretBox(server.config.encryptionKeys)).resolve(tenantId, server.projectId, 'dev', 'crm', secretKey);
      assert.equal(kidOf(kept), 'k1');
      await server.stop();

      server = await startTestServer({ dataDir, env: { PARLEY_ENCRYPTION_KEYS: keysEnv(['k2', K2], ['k1', K1]) } });
      assert.equal(kidOf(kept), 'k1');
      assert.equal(resolve('kept'), 'survives rotation');
      const put = await call(server.base, 'PUT', `/api/tool-secrets/${rotated}`, { body: { value: 'after rotation' } });
      assert.equal(put.status, 200);
      assert.equal(put.body.secret.version, 2);
      assert.equal(kidOf(rotated), 'k2');
      assertError(await call(server.base, 'POST', '/api/admin/tool-secrets/reseal', { key: 'not-the-operator-token-000000' }), 401, 'UNAUTHORIZED');
      const reseal = await call(server.base, 'POST', '/api/admin/tool-secrets/reseal', { key: ADMIN_TOKEN });
      assert.equal(reseal.status, 200, JSON.stringify(reseal.body));
      assert.deepEqual(reseal.body, { success: true, resealed: 1, unchanged: 1, failed: [] });
      assert.equal(kidOf(kept), 'k2');
      const listed = await call(server.base, 'GET', `/api/tool-secrets?projectId=${server.projectId}`);
      assert.deepEqual(listed.body.secrets.map((s: any) => s.version), [1, 2], 're-sealing keeps versions');
      const again = await call(server.base, 'POST', '/api/admin/tool-secrets/reseal', { key: ADMIN_TOKEN });
      assert.deepEqual(again.body, { success: true, resealed: 0, unchanged: 2, failed: [] });
      await server.stop();

      // The old key can now be dropped.
      server = await startTestServer({ dataDir, env: { PARLEY_ENCRYPTION_KEYS: keysEnv(['k2', K2]) } });
      assert.equal(resolve('kept'), 'survives rotation');
      assert.equal(resolve('rotated'), 'after rotation');
    } finally {
      await server.close();
    }
  });

  test('a secret whose key was dropped before re-sealing is reported as failed, and resolving it is 503-coded', async () => {
    let server = await startTestServer({ env: { PARLEY_ENCRYPTION_KEYS: keysEnv(['k1', K1]) } });
    const dataDir = server.dataDir;
    try {
      const tenantId = server.parley.bootstrap!.tenant.id;
      const made = await call(server.base, 'POST', '/api/tool-secrets', { body: { projectId: server.projectId, toolName: 'crm', secretKey: 'orphan', value: 'lost' } });
      assert.equal(made.status, 201);
      await server.stop();
      server = await startTestServer({ dataDir, env: { PARLEY_ENCRYPTION_KEYS: keysEnv(['k2', K2]) } });
      const reseal = await call(server.base, 'POST', '/api/admin/tool-secrets/reseal', { key: ADMIN_TOKEN });
      assert.deepEqual(reseal.body, { success: true, resealed: 0, unchanged: 0, failed: [made.body.secret.id] });
      const secrets = new ToolSecretStore(server.parley.deps.store, new SecretBox(server.config.encryptionKeys));
      assert.throws(() => secrets.resolve(tenantId, server.projectId, 'dev', 'crm', 'orphan'), (e: any) => e.code === 'SERVICE_UNAVAILABLE' && !String(e.message).includes('lost'));
    } finally {
      await server.close();
    }
  });
});

describe('tool secrets without PARLEY_ENCRYPTION_KEYS', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  test('create and rotate answer 503; list and validation still work', async () => {
    const res = await call(server.base, 'POST', '/api/tool-secrets', { body: { projectId: server.projectId, toolName: 't', secretKey: 'k', value: 'v' } });
    assertError(res, 503, 'SERVICE_UNAVAILABLE', /PARLEY_ENCRYPTION_KEYS/);
    const listed = await call(server.base, 'GET', `/api/tool-secrets?projectId=${server.projectId}`);
    assert.equal(listed.status, 200);
    assert.equal(listed.body.total, 0);
    assertError(await call(server.base, 'POST', '/api/tool-secrets', { body: { projectId: server.projectId, toolName: 't' } }), 400, 'VALIDATION_ERROR');
    assertError(await call(server.base, 'POST', '/api/admin/tool-secrets/reseal', { key: ADMIN_TOKEN }), 503, 'SERVICE_UNAVAILABLE');
  });
});
