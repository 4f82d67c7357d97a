// Project model settings over HTTP: keys sealed and never returned, validation, permissions,
// tenant isolation, and the stored settings driving a real ModelRouter call to a fake provider.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { SecretBox } from '../../runtime/index.js';
import { ModelRouter, ModelSettingsStore, PriceTable } from '../../actors/index.js';
import { assertError, call, createTenant, startTestServer, type TestServer, type TestTenant } from './harness.js';
import { startFakeOpenAi, type FakeOpenAi } from '../fixtures/models/fake-openai-server.js';

const OPENAI_KEY = 'sk-proj-INTEGRATION-secret-key-9876';
const ANTHROPIC_KEY = 'sk-ant-api03-INTEGRATION-secret-wxyz';
let server: TestServer;
let other: TestTenant;
let fake: FakeOpenAi;
const path = (projectId: string): string => `/api/projects/${projectId}/model-settings`;

before(async () => {
  server = await startTestServer({ env: { PARLEY_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`, PARLEY_WORKERS: '1' } });
  other = await createTenant(server, 'Other Co');
  fake = await startFakeOpenAi();
});
after(async () => {
  await fake.close();
  await server.close();
});

test('GET before any PUT: no providers, the default deadlines', async () => {
  const res = await call(server.base, 'GET', path(server.projectId));
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.modelSettings, { projectId: server.projectId, providers: {}, effectiveTimeouts: { totalMs: 60_000, firstByteMs: 15_000 }, updatedAt: null });
});

test('PUT stores providers; keys are sealed at rest and never returned (hasApiKey and the last 4 characters only)', async () => {
  const res = await call(server.base, 'PUT', path(server.projectId), {
    body: {
      providers: {
        openai: { kind: 'openai', baseUrl: `${fake.base}/v1/`, apiKey: OPENAI_KEY, defaultModel: 'gpt-4o-mini', timeouts: { firstByteMs: 5000 } },
        anthropic: { kind: 'anthropic', apiKey: ANTHROPIC_KEY },
        local: { kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1' },
      },
      timeouts: { totalMs: 30_000 },
    },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const text = JSON.stringify(res.body);
  assert.ok(!text.includes('INTEGRATION'), 'no key in the reply');
  const providers = res.body.modelSettings.providers;
  assert.deepEqual(providers.openai, { kind: 'openai', baseUrl: `${fake.base}/v1`, hasApiKey: true, apiKeyLast4: '9876', defaultModel: 'gpt-4o-mini', timeouts: { firstByteMs: 5000 } });
  assert.deepEqual(providers.anthropic, { kind: 'anthropic', baseUrl: 'https://api.anthropic.com', hasApiKey: true, apiKeyLast4: 'wxyz' });
  assert.deepEqual(providers.local, { kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', hasApiKey: false });
  assert.deepEqual(res.body.modelSettings.effectiveTimeouts, { totalMs: 30_000, firstByteMs: 15_000 });
  assert.equal(typeof res.body.modelSettings.updatedAt, 'string');

  const got = await call(server.base, 'GET', path(server.projectId));
  assert.equal(got.status, 200);
  assert.deepEqual(got.body.modelSettings, res.body.modelSettings);
  const project = (await call(server.base, 'GET', `/api/projects/${server.projectId}`)).body.project;
  const stored = server.parley.deps.store.collection('modelSettings').get([project.tenantId, server.projectId]);
  assert.ok(stored, 'a record exists');
  assert.ok(!JSON.stringify(stored).includes('INTEGRATION'), 'the key is not stored in clear');
});

test('the stored settings drive a ModelRouter: the decrypted key reaches the provider, deadlines merge', async () => {
  const project = (await call(server.base, 'GET', `/api/projects/${server.projectId}`)).body.project;
  const settings = new ModelSettingsStore(server.parley.deps.store, new SecretBox(server.config.encryptionKeys));
  const resolved = settings.resolveProvider(project.tenantId, server.projectId, 'openai')!;
  assert.deepEqual(resolved.timeouts, { totalMs: 30_000, firstByteMs: 5000 });
  fake.script({ kind: 'stream', text: ['stored ', 'settings'], usage: { prompt_tokens: 4, completion_tokens: 2 } });
  const router = new ModelRouter({ settings, prices: new PriceTable({}) });
  const result = await router.complete({ model: 'openai', system: '', messages: [{ role: 'user', content: 'hi' }], agentName: 'support' }, { tenantId: project.tenantId, projectId: server.projectId });
  assert.equal(result.text, 'stored settings');
  assert.equal(result.model, 'gpt-4o-mini');
  assert.equal(fake.requests.at(-1)!.headers['authorization'], `Bearer ${OPENAI_KEY}`);
  // Another tenant's router sees nothing of this project.
  await assert.rejects(router.complete({ model: 'openai/gpt-4o-mini', system: '', messages: [], agentName: 'a' }, { tenantId: other.tenantId, projectId: server.projectId }), (err: any) => err.code === 'BAD_REQUEST');
});

test('PUT without apiKey keeps the stored key; null removes it; moving a keyed provider needs the key again', async () => {
  const keep = await call(server.base, 'PUT', path(server.projectId), { body: { providers: { openai: { kind: 'openai', baseUrl: `${fake.base}/v1`, defaultModel: 'gpt-4.1' } } } });
  assert.equal(keep.status, 200, JSON.stringify(keep.body));
  assert.equal(keep.body.modelSettings.providers.openai.hasApiKey, true);
  assert.equal(keep.body.modelSettings.providers.openai.apiKeyLast4, '9876');
  assert.equal(keep.body.modelSettings.providers.anthropic, undefined, 'providers not listed are removed');
  assert.equal(keep.body.modelSettings.timeouts, undefined);

  const moved = await call(server.base, 'PUT', path(server.projectId), { body: { providers: { openai: { kind: 'openai', baseUrl: 'https://evil.example/v1' } } } });
  assertError(moved, 400, 'VALIDATION_ERROR', /base URL or kind changed, so send the key again/);
  assert.equal((await call(server.base, 'GET', path(server.projectId))).body.modelSettings.providers.openai.baseUrl, `${fake.base}/v1`, 'nothing changed');

  const removed = await call(server.base, 'PUT', path(server.projectId), { body: { providers: { openai: { kind: 'openai', baseUrl: `${fake.base}/v1`, apiKey: null } } } });
  assert.equal(removed.status, 200);
  assert.deepEqual(removed.body.modelSettings.providers.openai, { kind: 'openai', baseUrl: `${fake.base}/v1`, hasApiKey: false });

  const short = await call(server.base, 'PUT', path(server.projectId), { body: { providers: { openai: { kind: 'openai', baseUrl: `${fake.base}/v1`, apiKey: 'short-key' } } } });
  assert.equal(short.status, 200);
  assert.equal(short.body.modelSettings.providers.openai.hasApiKey, true);
  assert.equal(short.body.modelSettings.providers.openai.apiKeyLast4, undefined, 'a short key shows no hint');
});

test('PUT validation: non-http schemes, credentials in the URL, bad names, builtin, unknown fields, bad timeouts', async () => {
  const put = (providers: unknown, extra: Record<string, unknown> = {}) => call(server.base, 'PUT', path(server.projectId), { body: { providers, ...extra } });
  assertError(await put({ x: { kind: 'openai', baseUrl: 'file:///etc/passwd' } }), 400, 'VALIDATION_ERROR', /providers\.x\.baseUrl must use http or https \(got file\)/);
  assertError(await put({ x: { kind: 'openai', baseUrl: 'ftp://host/v1' } }), 400, 'VALIDATION_ERROR', /must use http or https/);
  assertError(await put({ x: { kind: 'openai', baseUrl: 'not a url' } }), 400, 'VALIDATION_ERROR', /absolute http or https URL/);
  assertError(await put({ x: { kind: 'openai', baseUrl: 'https://user:pass@host/v1' } }), 400, 'VALIDATION_ERROR', /must not contain credentials/);
  assertError(await put({ builtin: { kind: 'openai' } }), 400, 'VALIDATION_ERROR', /not "builtin"/);
  assertError(await put({ 'Bad Name': { kind: 'openai' } }), 400, 'VALIDATION_ERROR');
  assertError(await put({ x: { kind: 'gemini' } }), 400, 'VALIDATION_ERROR', /providers\.x\.kind/);
  assertError(await put({ x: { kind: 'openai', secret: 1 } }), 400, 'VALIDATION_ERROR', /Unknown field "providers\.x\.secret"/);
  assertError(await put({}, { timeouts: { totalMs: 0 } }), 400, 'VALIDATION_ERROR', /timeouts\.totalMs/);
  assertError(await put({}, { extra: true }), 400, 'VALIDATION_ERROR', /Unknown field "extra"/);
});

test('permissions and tenancy: a viewer reads but cannot write; another tenant gets 404', async () => {
  const created = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'viewer', role: 'viewer' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const viewer = created.body.key as string;
  const read = await call(server.base, 'GET', path(server.projectId), { key: viewer });
  assert.equal(read.status, 200);
  assert.equal(read.body.modelSettings.projectId, server.projectId);
  assertError(await call(server.base, 'PUT', path(server.projectId), { key: viewer, body: { providers: {} } }), 403, 'FORBIDDEN', /agent:write/);

  assertError(await call(server.base, 'GET', path(server.projectId), { key: other.key }), 404, 'NOT_FOUND');
  assertError(await call(server.base, 'PUT', path(server.projectId), { key: other.key, body: { providers: {} } }), 404, 'NOT_FOUND');
  const missing = await call(server.base, 'GET', path('prj_does_not_exist'), { key: other.key });
  assertError(missing, 404, 'NOT_FOUND');
  assertError(await call(server.base, 'GET', path(server.projectId), { key: null }), 401, 'UNAUTHORIZED');
});

// A second server, because encryption keys are process configuration: this one has none.
test('without PARLEY_ENCRYPTION_KEYS, saving a key is 503 (settings without keys still work)', async () => {
  const plain = await startTestServer({ env: { PARLEY_WORKERS: '1' } });
  try {
    const withKey = await call(plain.base, 'PUT', path(plain.projectId), { body: { providers: { openai: { kind: 'openai', apiKey: OPENAI_KEY } } } });
    assertError(withKey, 503, 'SERVICE_UNAVAILABLE', /PARLEY_ENCRYPTION_KEYS/);
    assert.ok(!JSON.stringify(withKey.body).includes('INTEGRATION'));
    assert.deepEqual((await call(plain.base, 'GET', path(plain.projectId))).body.modelSettings.providers, {}, 'nothing was saved');
    const keyless = await call(plain.base, 'PUT', path(plain.projectId), { body: { providers: { local: { kind: 'openai', baseUrl: 'http://localhost:8000/v1' } } } });
    assert.equal(keyless.status, 200);
    assert.equal(keyless.body.modelSettings.providers.local.hasApiKey, false);
  } finally {
    await plain.close();
  }
});
