import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SignJWT, exportJWK } from 'jose';
import { secretsEqual, sha256Hex } from '../../runtime/index.js';
import { ADMIN_KEY, assertError, call, type TestServer } from '../integration/harness.js';
import { startSecurityServer } from './fixture.js';

const JWT_SECRET = 'security-suite-jwt-secret-0123456789abcdef';
const SECRET_BYTES = new TextEncoder().encode(JWT_SECRET);
const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The source of a compiled-from file, for structural checks (dist/test/security → repo root). */
const source = (path: string): string => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

/**
 * JWT attacks not already in test/integration/auth.test.ts (which covers alg none, HS384/HS512,
 * a wrong secret, expired, wrong iss/aud, missing sub/exp/tid, tampered payload), and the
 * structure of API-key and operator-token comparison.
 */
describe('security: credentials', () => {
  let server: TestServer;
  let tenantId: string;
  let userId: string;

  before(async () => {
    server = await startSecurityServer({ PARLEY_JWT_SECRET: JWT_SECRET });
    tenantId = (await call(server.base, 'GET', '/api/projects')).body.projects[0].tenantId;
    const user = await call(server.base, 'POST', '/api/users', { body: { email: 'sec@example.com', password: 'a long enough password', role: 'admin' } });
    assert.equal(user.status, 201);
    userId = user.body.user.id;
  });
  after(async () => {
    await server.close();
  });

  const bearer = (token: string) => call(server.base, 'GET', '/api/projects', { key: token });
  const claims = () => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ tid: tenantId }).setSubject(userId).setIssuer('parley').setAudience('parley-api').setIssuedAt(now).setExpirationTime(now + 600);
  };

  test('control: a token signed like the server signs is accepted', async () => {
    const res = await bearer(await claims().setProtectedHeader({ alg: 'HS256' }).sign(SECRET_BYTES));
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  test('RS256 and ES256 tokens are refused, including one whose public key rides in the header (jwk)', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const tokens = [
      await claims().setProtectedHeader({ alg: 'RS256' }).sign(rsa.privateKey),
      await claims().setProtectedHeader({ alg: 'ES256' }).sign(ec.privateKey),
      await claims().setProtectedHeader({ alg: 'RS256', jwk: await exportJWK(rsa.publicKey) }).sign(rsa.privateKey),
    ];
    for (const token of tokens) assertError(await bearer(token), 401, 'UNAUTHORIZED');
  });

  test('algorithm confusion: an RS256 header over an HMAC made with the server secret is refused', async () => {
    const hs = await claims().setProtectedHeader({ alg: 'HS256' }).sign(SECRET_BYTES);
    const [, payload, signature] = hs.split('.');
    assertError(await bearer(`${b64url({ alg: 'RS256', typ: 'JWT' })}.${payload}.${signature}`), 401, 'UNAUTHORIZED');
    assertError(await bearer(`${b64url({ alg: 'HS256', crit: ['exp'] })}.${payload}.${signature}`), 401, 'UNAUTHORIZED');
  });

  test('missing issuer, missing audience and a not-yet-valid token are refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    const noIss = await new SignJWT({ tid: tenantId }).setProtectedHeader({ alg: 'HS256' }).setSubject(userId).setAudience('parley-api').setExpirationTime(now + 600).sign(SECRET_BYTES);
    const noAud = await new SignJWT({ tid: tenantId }).setProtectedHeader({ alg: 'HS256' }).setSubject(userId).setIssuer('parley').setExpirationTime(now + 600).sign(SECRET_BYTES);
    const future = await claims().setNotBefore(now + 3600).setProtectedHeader({ alg: 'HS256' }).sign(SECRET_BYTES);
    for (const token of [noIss, noAud, future]) assertError(await bearer(token), 401, 'UNAUTHORIZED');
  });

  test('a valid JWT sent as X-API-Key, or with junk around it, is refused', async () => {
    const token = await claims().setProtectedHeader({ alg: 'HS256' }).sign(SECRET_BYTES);
    assertError(await call(server.base, 'GET', '/api/projects', { key: null, headers: { 'x-api-key': token } }), 401, 'UNAUTHORIZED');
    assertError(await bearer(`${token}.`), 401, 'UNAUTHORIZED');
    assertError(await bearer(`${token}AA`), 401, 'UNAUTHORIZED');
  });

  test('API keys are found by SHA-256: the record holds the hash, never the key; one changed character fails', async () => {
    const made = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'hashed', role: 'developer' } });
    assert.equal(made.status, 201);
    const key: string = made.body.key;
    const record = server.parley.deps.tenancy.apiKeyBySecret(key);
    assert.ok(record);
    assert.equal(record.hash, sha256Hex(key));
    assert.equal(JSON.stringify(record).includes(key), false, 'the stored record contains the key');
    assert.equal(JSON.stringify(record).includes(key.slice(10)), false, 'the stored record contains the secret part of the key');
    assert.equal(server.parley.deps.tenancy.apiKeyBySecret(key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A')), undefined);
    for (const wrong of [key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A'), key + 'x', key.slice(0, -1), key.toUpperCase()]) {
      assertError(await call(server.base, 'GET', '/api/projects', { key: wrong }), 401, 'UNAUTHORIZED');
    }
    assert.match(source('actors/tenancy/tenancy-store.ts'), /apiKeyBySecret\(key: string\)[^}]*sha256Hex\(key\)/s, 'apiKeyBySecret looks keys up by their SHA-256');
  });

  test('a cached key deleted in the store fails on the very next request', async () => {
    const made = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'cached', role: 'developer' } });
    const key: string = made.body.key;
    for (let i = 0; i < 3; i++) assert.equal((await call(server.base, 'GET', '/api/projects', { key })).status, 200);
    assert.equal(await server.parley.deps.tenancy.deleteApiKey(tenantId, made.body.apiKey.id), true);
    assertError(await call(server.base, 'GET', '/api/projects', { key }), 401, 'UNAUTHORIZED');
    assertError(await call(server.base, 'GET', '/api/projects', { key: null, headers: { 'x-api-key': key } }), 401, 'UNAUTHORIZED');
  });

  test('secretsEqual: equal, unequal, different lengths, empty; built on timingSafeEqual over fixed-size digests', () => {
    assert.equal(secretsEqual('same-secret', 'same-secret'), true);
    assert.equal(secretsEqual('same-secret', 'same-secreT'), false);
    assert.equal(secretsEqual('short', 'a much longer secret value'), false);
    assert.equal(secretsEqual('', ''), true);
    assert.equal(secretsEqual('', 'x'), false);
    assert.equal(secretsEqual('ü', 'u\u0308'), false, 'no normalisation: different bytes differ');
    const body = /export function secretsEqual[\s\S]*?\n}/.exec(source('runtime/crypto.ts'))?.[0] ?? '';
    assert.match(body, /timingSafeEqual\(/, 'secretsEqual calls timingSafeEqual');
    assert.match(body, /createHash\('sha256'\)/, 'secretsEqual compares digests, so lengths leak nothing');
    assert.doesNotMatch(body, /[^=!]===?[^=]|\.equals\(|localeCompare/, 'secretsEqual has no early-exit comparison');
    // The operator token goes through it.
    assert.match(source('gateway/auth.ts'), /authenticateAdmin[\s\S]*?secretsEqual\(/);
    // And it works through the server: a near-miss operator token is refused.
    return call(server.base, 'POST', '/api/admin/tenants', { key: 'test-operator-token-012345678X', body: { name: 'x' } }).then((res) => assertError(res, 401, 'UNAUTHORIZED'));
  });

  test('the bootstrap key still works after all of that', async () => {
    assert.equal((await call(server.base, 'GET', '/api/projects', { key: ADMIN_KEY })).status, 200);
  });
});
