import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ParleyError } from '../../runtime/index.js';
import { RateLimiter, type EffectiveLimits } from '../../gateway/limits/rate-limiter.js';
import { ADMIN_KEY, ADMIN_TOKEN, assertError, call, chat, createTenant, deployAgent, startTestServer, type ApiResponse, type TestServer, type TestTenant } from './harness.js';

/** Runs fn and returns the ParleyError it throws (fails when it does not throw one). */
function thrown(fn: () => void): ParleyError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ParleyError, String(err));
    return err;
  }
  assert.fail('expected a ParleyError');
}

describe('RateLimiter (fake clock)', () => {
  const defaults: EffectiveLimits = { requestsPerSecond: 5, sessionMessagesPerMinute: 3, activeSessions: 2 };
  function limiter(overrides: Record<string, Partial<EffectiveLimits>> = {}, maxTenants?: number) {
    const clock = { now: 1_700_000_000_000 };
    const source = { version: 0, overrides: (t: string) => overrides[t] };
    const l = new RateLimiter({ defaults, source, sessionIdleMs: 30_000, clock: () => clock.now, maxTenants });
    return { l, clock, source, overrides };
  }

  test('token bucket: a burst of one second, then 429 with the wait until the next token', () => {
    const { l, clock } = limiter();
    for (let i = 4; i >= 0; i--) {
      l.take('t1');
      assert.equal(l.remaining, i);
    }
    // Full again after (5 - 0) tokens at 5/s = 1 s.
    assert.equal(l.resetAt, Math.ceil((clock.now + 1000) / 1000));
    const err = thrown(() => l.take('t1'));
    assert.equal(err.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(err.details?.['retryAfterMs'], 200);
    assert.equal(err.details?.['limit'], 'requestsPerSecond');
    assert.equal(l.remaining, 0);
    // Another tenant has its own bucket.
    l.take('t2');
    assert.equal(l.remaining, 4);
    clock.now += 199;
    assert.equal(thrown(() => l.take('t1')).details?.['retryAfterMs'], 1);
    clock.now += 1;
    l.take('t1');
    assert.equal(l.remaining, 0);
    // Refill is capped at the burst.
    clock.now += 60_000;
    l.take('t1');
    assert.equal(l.remaining, 4);
  });

  test('session messages: a sliding minute; the refused message is not counted', () => {
    const { l, clock } = limiter();
    for (let i = 0; i < 3; i++) l.admitMessage('t', 's1');
    const err = thrown(() => l.admitMessage('t', 's1'));
    assert.equal(err.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(err.details?.['limit'], 'sessionMessagesPerMinute');
    const wait = err.details?.['retryAfterMs'] as number;
    assert.ok(wait > 60_000 - 1 && wait <= 120_000, `wait ${wait}`);
    clock.now += wait - 1;
    thrown(() => l.admitMessage('t', 's1'));
    clock.now += 1;
    l.admitMessage('t', 's1');
    thrown(() => l.admitMessage('t', 's1'));
  });

  test('active sessions: a new session beyond the limit is refused until one goes idle', () => {
    const { l, clock } = limiter();
    l.admitMessage('t', 'a');
    clock.now += 10_000;
    l.admitMessage('t', 'b');
    const err = thrown(() => l.admitMessage('t', 'c'));
    assert.equal(err.details?.['limit'], 'activeSessions');
    // 'a' goes idle 30 s after its message, 20 s from now.
    assert.equal(err.details?.['retryAfterMs'], 20_000);
    // Existing sessions continue; 'a' speaking again keeps it active, so 'b' is now the oldest.
    l.admitMessage('t', 'a');
    l.admitMessage('t', 'b');
    l.admitMessage('other-tenant', 'c');
    clock.now += 30_000;
    l.admitMessage('t', 'c');
    l.admitMessage('t', 'd');
    thrown(() => l.admitMessage('t', 'e'));
  });

  test('overrides apply from the next request after the source version changes', () => {
    const { l, source, overrides } = limiter();
    assert.deepEqual(l.limitsOf('t'), defaults);
    overrides['t'] = { requestsPerSecond: 1, activeSessions: 5 };
    assert.equal(l.limitsOf('t').requestsPerSecond, 5, 'cached until the version changes');
    source.version++;
    assert.deepEqual(l.limitsOf('t'), { requestsPerSecond: 1, sessionMessagesPerMinute: 3, activeSessions: 5 });
    l.take('t');
    assert.equal(thrown(() => l.take('t')).details?.['retryAfterMs'], 1000);
  });

  test('idle tenants are swept: the map stays bounded', () => {
    const { l, clock } = limiter({}, 10);
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 10; i++) l.take(`t${round}-${i}`);
      clock.now += 2000;
    }
    assert.ok(l.trackedTenants <= 20, `tracked ${l.trackedTenants}`);
    // A tenant with an active session is kept (its session count matters).
    const { l: l2, clock: c2 } = limiter({}, 2);
    l2.admitMessage('busy', 's');
    l2.admitMessage('busy', 's2');
    for (let i = 0; i < 10; i++) {
      c2.now += 2000;
      l2.take(`idle${i}`);
    }
    const err = thrown(() => l2.admitMessage('busy', 's3'));
    assert.equal(err.details?.['limit'], 'activeSessions');
  });
});

describe('rate limits over HTTP', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ env: { PARLEY_TENANT_RPS: '1000', PARLEY_SESSION_MESSAGES_PER_MINUTE: '1000' } });
    await deployAgent(server, 'greeter');
  });
  after(async () => {
    await server.close();
  });

  const setLimits = (tenantId: string, body: unknown) => call(server.base, 'PUT', `/api/admin/tenants/${tenantId}/limits`, { key: ADMIN_TOKEN, body });
  async function tenantWithGreeter(name: string): Promise<TestTenant> {
    const t = await createTenant(server, name);
    await deployAgent(server, 'greeter', { projectId: t.projectId, key: t.key });
    return t;
  }

  /** X-RateLimit-Reset is a Unix timestamp in seconds, at most the burst (1 s) away. */
  function assertRateHeaders(res: ApiResponse): void {
    const remaining = res.headers.get('x-ratelimit-remaining');
    const reset = res.headers.get('x-ratelimit-reset');
    assert.match(remaining ?? '', /^\d+$/, `X-RateLimit-Remaining: ${remaining}`);
    assert.match(reset ?? '', /^\d{10}$/, `X-RateLimit-Reset: ${reset}`);
    const now = Date.now() / 1000;
    assert.ok(Number(reset) >= Math.floor(now) - 1 && Number(reset) <= Math.ceil(now) + 2, `reset ${reset} vs now ${now}`);
  }

  test('every authenticated response carries X-RateLimit-Remaining and X-RateLimit-Reset', async () => {
    const ok = await call(server.base, 'GET', '/api/projects');
    assert.equal(ok.status, 200);
    assertRateHeaders(ok);
    assert.ok(Number(ok.headers.get('x-ratelimit-remaining')) < 1000);
    const notFound = await call(server.base, 'GET', '/api/projects/c000000000000000000000000');
    assertError(notFound, 404, 'NOT_FOUND');
    assertRateHeaders(notFound);
    const stream = await fetch(`${server.base}/api/v1/chat/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: server.projectId, message: 'hi' }),
    });
    assert.equal(stream.status, 200);
    assertRateHeaders({ status: stream.status, headers: stream.headers, body: await stream.text() });
    // Unauthenticated answers say nothing about anyone's quota.
    const anonymous = await call(server.base, 'GET', '/api/projects', { key: null });
    assertError(anonymous, 401, 'UNAUTHORIZED');
    assert.equal(anonymous.headers.get('x-ratelimit-remaining'), null);
  });

  test('a tenant over its request rate gets 429 RATE_LIMIT_EXCEEDED with retryAfterMs and headers; others do not', async () => {
    const t = await createTenant(server, 'Limited');
    const set = await setLimits(t.tenantId, { requestsPerSecond: 2 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body.limits, { requestsPerSecond: 2 });
    assert.deepEqual(set.body.effective, { requestsPerSecond: 2, sessionMessagesPerMinute: 1000, activeSessions: 1000 });
    const results = await Promise.all(Array.from({ length: 12 }, () => call(server.base, 'GET', '/api/projects', { key: t.key })));
    const refused = results.filter((r) => r.status === 429);
    assert.ok(refused.length >= 1, `statuses ${results.map((r) => r.status).join(',')}`);
    assert.ok(results.some((r) => r.status === 200));
    for (const r of refused) {
      assertError(r, 429, 'RATE_LIMIT_EXCEEDED');
      assert.equal(Number.isInteger(r.body.retryAfterMs), true);
      assert.ok(r.body.retryAfterMs >= 1 && r.body.retryAfterMs <= 500, `retryAfterMs ${r.body.retryAfterMs}`);
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
      assertRateHeaders(r);
    }
    // The bootstrap tenant is untouched.
    const other = await call(server.base, 'GET', '/api/projects');
    assert.equal(other.status, 200);
  });

  test('session message rate: the message over the per-minute limit answers 429 (send and stream, as JSON)', async () => {
    const t = await tenantWithGreeter('Chatty');
    assert.equal((await setLimits(t.tenantId, { sessionMessagesPerMinute: 2 })).status, 200);
    const first = await chat(server, { projectId: t.projectId, message: 'hi' }, { key: t.key });
    await chat(server, { sessionId: first.sessionId, message: 'hi' }, { key: t.key });
    const third = await call(server.base, 'POST', '/api/v1/chat/send', { key: t.key, body: { sessionId: first.sessionId, message: 'hi' } });
    assertError(third, 429, 'RATE_LIMIT_EXCEEDED', /per minute/);
    assert.equal(third.body.error.details.limit, 'sessionMessagesPerMinute');
    assert.ok(third.body.retryAfterMs > 0 && third.body.retryAfterMs <= 120_000);
    assert.ok(Number(third.headers.get('retry-after')) >= 1);
    const streamed = await call(server.base, 'POST', '/api/v1/chat/stream', { key: t.key, body: { sessionId: first.sessionId, message: 'hi' } });
    assertError(streamed, 429, 'RATE_LIMIT_EXCEEDED');
    // The refused messages were not recorded; a new session is free to talk.
    const messages = await call(server.base, 'GET', `/api/projects/${t.projectId}/sessions/${first.sessionId}/messages`, { key: t.key });
    assert.equal(messages.status, 200);
    assert.equal(messages.body.messages.filter((m: { role: string }) => m.role === 'user').length, 2);
    await chat(server, { projectId: t.projectId, message: 'hi' }, { key: t.key });
  });

  test('active sessions: a new session over the limit answers 429; existing ones continue; raising it applies at once', async () => {
    const t = await tenantWithGreeter('Busy');
    assert.equal((await setLimits(t.tenantId, { activeSessions: 2 })).status, 200);
    const a = await chat(server, { projectId: t.projectId, message: 'hi' }, { key: t.key });
    await chat(server, { projectId: t.projectId, message: 'hi' }, { key: t.key });
    const refused = await call(server.base, 'POST', '/api/v1/chat/send', { key: t.key, body: { projectId: t.projectId, message: 'hi' } });
    assertError(refused, 429, 'RATE_LIMIT_EXCEEDED', /active sessions/);
    assert.equal(refused.body.error.details.limit, 'activeSessions');
    assert.ok(refused.body.retryAfterMs > 0);
    const sessions = await call(server.base, 'GET', `/api/projects/${t.projectId}/sessions`, { key: t.key });
    assert.equal(sessions.body.pagination.total, 2, 'the refused chat created no session');
    const again = await chat(server, { sessionId: a.sessionId, message: 'hi' }, { key: t.key });
    assert.equal(again.sessionId, a.sessionId);
    assert.equal((await setLimits(t.tenantId, { activeSessions: 3 })).status, 200);
    await chat(server, { projectId: t.projectId, message: 'hi' }, { key: t.key });
  });

  test('GET and PUT /api/admin/tenants/{id}/limits: validation, unknown tenant, operator only; {} restores defaults', async () => {
    const t = await createTenant(server, 'Configured');
    assertError(await setLimits(t.tenantId, { requestsPerSecond: 0 }), 400, 'VALIDATION_ERROR', /requestsPerSecond/);
    assertError(await setLimits(t.tenantId, { requestsPerSecond: 1.5 }), 400, 'VALIDATION_ERROR');
    assertError(await setLimits(t.tenantId, { burst: 5 }), 400, 'VALIDATION_ERROR', /burst/);
    assertError(await setLimits(t.tenantId, { tenantId: 'x' }), 400, 'VALIDATION_ERROR', /tenantId/);
    assertError(await setLimits('c000000000000000000000000', { activeSessions: 3 }), 404, 'NOT_FOUND');
    const asTenant = await call(server.base, 'PUT', `/api/admin/tenants/${t.tenantId}/limits`, { key: t.key, body: { requestsPerSecond: 100000 } });
    assertError(asTenant, 401, 'UNAUTHORIZED');
    assert.equal((await setLimits(t.tenantId, { activeSessions: 7, sessionMessagesPerMinute: 9 })).status, 200);
    const read = await call(server.base, 'GET', `/api/admin/tenants/${t.tenantId}/limits`, { key: ADMIN_TOKEN });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.limits, { activeSessions: 7, sessionMessagesPerMinute: 9 });
    assert.deepEqual(read.body.effective, { requestsPerSecond: 1000, sessionMessagesPerMinute: 9, activeSessions: 7 });
    assert.equal((await setLimits(t.tenantId, {})).status, 200);
    const cleared = await call(server.base, 'GET', `/api/admin/tenants/${t.tenantId}/limits`, { key: ADMIN_TOKEN });
    assert.deepEqual(cleared.body.limits, {});
    assert.deepEqual(cleared.body.effective, { requestsPerSecond: 1000, sessionMessagesPerMinute: 1000, activeSessions: 1000 });
  });
});

describe('QUEUE_FULL end to end (PARLEY_MAILBOX_LIMIT=1)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { PARLEY_MAILBOX_LIMIT: '1', PARLEY_TENANT_RPS: '100000', PARLEY_SESSION_MESSAGES_PER_MINUTE: '100000' } });
    await deployAgent(server, 'greeter');
  });
  after(async () => {
    await server.close();
  });

  test('concurrent chats on one session: the overflow answers 429 QUEUE_FULL with retryAfterMs and headers', async () => {
    const { sessionId } = await chat(server, { projectId: server.projectId, message: 'hi' });
    let queueFull: ApiResponse | undefined;
    let ok = 0;
    for (let attempt = 0; attempt < 5 && !queueFull; attempt++) {
      const results = await Promise.all(Array.from({ length: 40 }, () => call(server.base, 'POST', '/api/v1/chat/send', { body: { sessionId, message: 'hi' } })));
      for (const r of results) {
        if (r.status === 200) ok++;
        else if (r.status === 429 && r.body?.error?.code === 'QUEUE_FULL') queueFull = r;
        else assert.fail(`unexpected ${r.status} ${JSON.stringify(r.body)}`);
      }
    }
    assert.ok(queueFull, 'no request was refused with QUEUE_FULL');
    assert.ok(ok >= 1, 'no request got through');
    assertError(queueFull, 429, 'QUEUE_FULL');
    assert.equal(Number.isInteger(queueFull.body.retryAfterMs), true);
    assert.ok(queueFull.body.retryAfterMs > 0);
    assert.equal(queueFull.headers.get('retry-after'), String(Math.ceil(queueFull.body.retryAfterMs / 1000)));
    assert.match(queueFull.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
    assert.match(queueFull.headers.get('x-ratelimit-reset') ?? '', /^\d{10}$/);
    // The session still works once the burst is over.
    const after = await chat(server, { sessionId, message: 'hi' });
    assert.equal(after.response, 'Hello from greeter!');
  });
});
