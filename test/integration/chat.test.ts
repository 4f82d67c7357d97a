import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY, assertError, call, chat, deployAgent, deployAgents, readSse, startTestServer, type TestServer } from './harness.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const CUID = /^c[0-9a-z]{24}$/;
const HEARTBEAT_MS = 20;

describe('chat', () => {
  let server: TestServer;
  let P: string;
  before(async () => {
    server = await startTestServer({ env: { PARLEY_SSE_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
    P = `/api/projects/${server.projectId}`;
    // greeter first: it is the project's oldest compiled agent, so the entry agent by default.
    await deployAgent(server, 'greeter');
    await deployAgents(server, ['billing_support', 'human_desk', 'fraud_check']);
  });
  after(async () => {
    await server.close();
  });

  /** POST /api/v1/chat/stream and read the whole event stream. */
  async function stream(body: Record<string, unknown>) {
    const res = await fetch(`${server.base}/api/v1/chat/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const contentType = res.headers.get('content-type') ?? '';
    if (!contentType.startsWith('text/event-stream')) return { res, contentType, events: [], comments: [], json: await res.json() as any };
    return { res, contentType, ...(await readSse(res)), json: undefined };
  }

  const session = (id: string, projectPath = P) => call(server.base, 'GET', `${projectPath}/sessions/${id}`);
  const newProject = async (name: string): Promise<string> => {
    const res = await call(server.base, 'POST', '/api/projects', { body: { name } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.project.id;
  };

  describe('request/response', () => {
    test('the greeter answers through /chat/agent with the chat response shape', async () => {
      const hi = await call(server.base, 'POST', '/api/v1/chat/agent', { body: { projectId: server.projectId, message: 'hi there' } });
      assert.equal(hi.status, 200, JSON.stringify(hi.body));
      assert.equal(hi.body.success, true);
      assert.match(hi.body.sessionId, CUID);
      assert.equal(hi.body.response, 'Hello from greeter!');
      assert.deepEqual(hi.body.traceEvents, []);
      assert.equal(hi.body.agentName, 'greeter');
      assert.equal(typeof hi.body.usage.inputTokens, 'number');
      assert.ok(hi.body.usage.outputTokens > 0);
      assert.equal(typeof hi.body.latencyMs, 'number');

      const time = await call(server.base, 'POST', '/api/v1/chat/agent', { body: { projectId: server.projectId, message: 'what time is it' } });
      assert.equal(time.status, 200);
      assert.equal(time.body.response, 'I only say hello.');
      assert.ok(Array.isArray(time.body.traceEvents));
      assert.notEqual(time.body.sessionId, hi.body.sessionId, 'without sessionId a new session starts');
    });

    test('/chat/send starts a session with projectId and continues it with sessionId', async () => {
      const first = await chat(server, { projectId: server.projectId, message: 'hello' });
      assert.equal(first.response, 'Hello from greeter!');
      const second = await chat(server, { sessionId: first.sessionId, message: 'what time is it' });
      assert.equal(second.sessionId, first.sessionId);
      assert.equal(second.response, 'I only say hello.');
      const third = await chat(server, { sessionId: first.sessionId, projectId: server.projectId, message: 'hi' });
      assert.equal(third.sessionId, first.sessionId);
      // /chat/agent continues it too.
      const fourth = await chat(server, { sessionId: first.sessionId, projectId: server.projectId, message: 'hi' }, { endpoint: 'agent' });
      assert.equal(fourth.sessionId, first.sessionId);

      const detail = await session(first.sessionId);
      assert.equal(detail.status, 200);
      assert.equal(detail.body.session.messageCount, 8);
      const messages = await call(server.base, 'GET', `${P}/sessions/${first.sessionId}/messages`);
      assert.equal(messages.status, 200);
      assert.deepEqual(messages.body.messages.map((m: { role: string; text: string }) => `${m.role}:${m.text}`), [
        'user:hello', 'agent:Hello from greeter!',
        'user:what time is it', 'agent:I only say hello.',
        'user:hi', 'agent:Hello from greeter!',
        'user:hi', 'agent:Hello from greeter!',
      ]);
      assert.equal(messages.body.messages[1].agentName, 'greeter');
      assert.match(messages.body.messages[0].at, ISO);
    });

    test('/chat/agent without projectId: 400', async () => {
      assertError(await call(server.base, 'POST', '/api/v1/chat/agent', { body: { message: 'hi' } }), 400, 'VALIDATION_ERROR', /projectId/);
      const first = await chat(server, { projectId: server.projectId, message: 'hi' });
      // Even with a sessionId, /chat/agent requires projectId.
      assertError(await call(server.base, 'POST', '/api/v1/chat/agent', { body: { sessionId: first.sessionId, message: 'hi' } }), 400, 'VALIDATION_ERROR', /projectId/);
    });

    test('/chat/send with neither sessionId nor projectId: 400', async () => {
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { message: 'hi' } }), 400, 'BAD_REQUEST', /sessionId|projectId/);
    });

    test('an unknown sessionId: 404; a bad-shaped sessionId: 404', async () => {
      for (const sessionId of [`c${'0'.repeat(24)}`, 'not-a-session', '../../etc/passwd', 'C' + 'A'.repeat(24), 'x'.repeat(128)]) {
        assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { sessionId, message: 'hi' } }), 404, 'NOT_FOUND', /Session not found/);
        assertError(await call(server.base, 'POST', '/api/v1/chat/agent', { body: { projectId: server.projectId, sessionId, message: 'hi' } }), 404, 'NOT_FOUND');
      }
    });

    test('a session continued in another project of the tenant: 404', async () => {
      const other = await newProject('Other chat project');
      const first = await chat(server, { projectId: server.projectId, message: 'hi' });
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { sessionId: first.sessionId, projectId: other, message: 'hi' } }), 404, 'NOT_FOUND');
      // It is still there for its own project.
      assert.equal((await chat(server, { sessionId: first.sessionId, projectId: server.projectId, message: 'hi' })).sessionId, first.sessionId);
    });

    test('message and body validation: empty, too long, wrong type, unknown field → 400', async () => {
      const base = { projectId: server.projectId };
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { ...base, message: '' } }), 400, 'VALIDATION_ERROR', /message/);
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { ...base, message: 'x'.repeat(32_001) } }), 400, 'VALIDATION_ERROR', /message/);
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { ...base, message: 42 } }), 400, 'VALIDATION_ERROR', /message/);
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { ...base } }), 400, 'VALIDATION_ERROR', /message/);
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { ...base, message: 'hi', tenantId: 'x' } }), 400, 'VALIDATION_ERROR', /tenantId/);
      // A 32,000-character message is accepted, and metadata is allowed.
      const long = await call(server.base, 'POST', '/api/v1/chat/send', { body: { ...base, message: 'hi ' + 'x'.repeat(31_997), metadata: { channel: 'test' } } });
      assert.equal(long.status, 200, JSON.stringify(long.body).slice(0, 300));
      assert.equal(long.body.response, 'Hello from greeter!');
    });

    test('an unknown project: 404', async () => {
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { projectId: `c${'1'.repeat(24)}`, message: 'hi' } }), 404, 'NOT_FOUND');
      assertError(await call(server.base, 'POST', '/api/v1/chat/agent', { body: { projectId: 'nope', message: 'hi' } }), 404, 'NOT_FOUND');
    });

    test('agentName without a compiled version: 400; unknown agentName: 404', async () => {
      const draft = await call(server.base, 'POST', `${P}/agents`, { body: { name: 'draft', dslContent: 'AGENT: draft\nFALLBACK: "draft"' } });
      assert.equal(draft.status, 201);
      const res = await call(server.base, 'POST', '/api/v1/chat/agent', { body: { projectId: server.projectId, agentName: 'draft', message: 'hi' } });
      assertError(res, 400, 'VALIDATION_ERROR', /draft/);
      assertError(await call(server.base, 'POST', '/api/v1/chat/agent', { body: { projectId: server.projectId, agentName: 'nobody', message: 'hi' } }), 404, 'NOT_FOUND');
      // agentName picks the entry agent of a new session.
      const billing = await chat(server, { projectId: server.projectId, agentName: 'billing_support', message: 'When is my invoice due?' });
      assert.equal(billing.agentName, 'billing_support');
      assert.equal(billing.response, 'Invoices are due 30 days after they are issued.');
    });

    test('a project without compiled agents: 400', async () => {
      const empty = await newProject('No agents yet');
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { projectId: empty, message: 'hi' } }), 400, 'VALIDATION_ERROR', /no compiled agent/);
      // An uncompiled working copy does not count.
      assert.equal((await call(server.base, 'POST', `/api/projects/${empty}/agents`, { body: { name: 'greeter', dslContent: 'AGENT: greeter\nFALLBACK: "x"' } })).status, 201);
      assertError(await call(server.base, 'POST', '/api/v1/chat/agent', { body: { projectId: empty, message: 'hi' } }), 400, 'VALIDATION_ERROR');
      // No session was recorded for the refused chats.
      const sessions = await call(server.base, 'GET', `/api/projects/${empty}/sessions`);
      assert.equal(sessions.body.pagination.total, 0);
    });

    test('the project’s defaultAgent is the entry agent when set', async () => {
      const project = await newProject('Default agent project');
      await deployAgent(server, 'greeter', { projectId: project });
      await deployAgent(server, 'human_desk', { projectId: project });
      const patched = await call(server.base, 'PATCH', `/api/projects/${project}`, { body: { defaultAgent: 'human_desk' } });
      assert.equal(patched.status, 200);
      const r = await chat(server, { projectId: project, message: 'hi' });
      assert.equal(r.agentName, 'human_desk');
      assert.match(r.response, /member of our team/);
    });
  });

  describe('sessions', () => {
    test('list: newest first, pagination {total, limit (default 50), offset, hasMore}; limit=500 → 400', async () => {
      const project = await newProject('Paging project');
      await deployAgent(server, 'greeter', { projectId: project });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await chat(server, { projectId: project, message: `hi ${i}` })).sessionId);
      const PP = `/api/projects/${project}`;

      const all = await call(server.base, 'GET', `${PP}/sessions`);
      assert.equal(all.status, 200);
      assert.equal(all.body.success, true);
      assert.deepEqual(all.body.pagination, { total: 3, limit: 50, offset: 0, hasMore: false });
      assert.deepEqual(all.body.sessions.map((s: { sessionId: string }) => s.sessionId), [...ids].reverse());
      const s0 = all.body.sessions[0];
      assert.equal(s0.projectId, project);
      assert.equal(s0.status, 'active');
      assert.equal(s0.entryAgent, 'greeter');
      assert.equal(s0.currentAgent, 'greeter');
      assert.equal(s0.handoffCount, 0);
      assert.equal(s0.messageCount, 2);
      assert.deepEqual(s0.agentVersions, { greeter: 1 });
      assert.match(s0.createdAt, ISO);
      assert.equal(s0.conversation, undefined, 'internal state is not exposed');
      assert.equal(s0.tenantId, undefined);

      const page1 = await call(server.base, 'GET', `${PP}/sessions?limit=2`);
      assert.deepEqual(page1.body.pagination, { total: 3, limit: 2, offset: 0, hasMore: true });
      assert.deepEqual(page1.body.sessions.map((s: { sessionId: string }) => s.sessionId), [ids[2], ids[1]]);
      const page2 = await call(server.base, 'GET', `${PP}/sessions?limit=2&offset=2`);
      assert.deepEqual(page2.body.pagination, { total: 3, limit: 2, offset: 2, hasMore: false });
      assert.deepEqual(page2.body.sessions.map((s: { sessionId: string }) => s.sessionId), [ids[0]]);
      const max = await call(server.base, 'GET', `${PP}/sessions?limit=200`);
      assert.equal(max.status, 200);
      assert.equal(max.body.pagination.limit, 200);

      for (const query of ['limit=500', 'limit=201', 'limit=0', 'limit=-1', 'limit=abc', 'limit=1.5', 'offset=-1']) {
        const res = await call(server.base, 'GET', `${PP}/sessions?${query}`);
        assertError(res, 400, 'VALIDATION_ERROR');
      }
    });

    test('detail: handoffCount and messageCount; unknown session 404', async () => {
      const r = await chat(server, { projectId: server.projectId, message: 'hi' });
      const detail = await session(r.sessionId);
      assert.equal(detail.status, 200);
      assert.equal(detail.body.success, true);
      assert.equal(detail.body.session.sessionId, r.sessionId);
      assert.equal(detail.body.session.handoffCount, 0);
      assert.equal(detail.body.session.messageCount, 2);
      assertError(await session(`c${'3'.repeat(24)}`), 404, 'NOT_FOUND');
      assertError(await call(server.base, 'GET', `${P}/sessions/c${'3'.repeat(24)}/messages`), 404, 'NOT_FOUND');
    });
  });

  describe('streaming', () => {
    test('/chat/stream: text/event-stream with session, text_delta…, usage, complete in order', async () => {
      const { res, contentType, events } = await stream({ projectId: server.projectId, message: 'hi there' });
      assert.equal(res.status, 200);
      assert.match(contentType, /^text\/event-stream/);
      assert.match(res.headers.get('x-request-id') ?? '', /.{8,}/);
      const names = events.map((e) => e.event);
      assert.equal(names[0], 'session');
      assert.deepEqual(names.slice(-2), ['usage', 'complete']);
      const deltas = events.filter((e) => e.event === 'text_delta');
      assert.ok(deltas.length >= 2, `several deltas: ${JSON.stringify(names)}`);
      assert.deepEqual(names.slice(1, -2), deltas.map(() => 'text_delta'));
      assert.equal(deltas.map((e) => e.data.delta).join(''), 'Hello from greeter!');

      const sessionId = events[0]!.data.sessionId;
      assert.match(sessionId, CUID);
      const usage = events.at(-2)!.data;
      assert.deepEqual(Object.keys(usage).sort(), ['inputTokens', 'outputTokens']);
      assert.ok(usage.outputTokens > 0);
      const complete = events.at(-1)!.data;
      assert.equal(complete.inputTokens, usage.inputTokens);
      assert.equal(complete.outputTokens, usage.outputTokens);
      assert.equal(complete.totalTokens, usage.inputTokens + usage.outputTokens);
      assert.equal(typeof complete.latencyMs, 'number');
      assert.equal(complete.sessionId, sessionId);
      assert.equal(complete.agentName, 'greeter');

      // The same message over /chat/agent gives the same response and usage; the streamed turn was saved.
      const plain = await call(server.base, 'POST', '/api/v1/chat/agent', { body: { projectId: server.projectId, message: 'hi there' } });
      assert.deepEqual(plain.body.usage, usage);
      const detail = await session(sessionId);
      assert.equal(detail.body.session.messageCount, 2);
      const messages = await call(server.base, 'GET', `${P}/sessions/${sessionId}/messages`);
      assert.equal(messages.body.messages[1].text, 'Hello from greeter!');
    });

    test('/chat/stream continues a session by sessionId', async () => {
      const first = await chat(server, { projectId: server.projectId, message: 'hi' });
      const { events } = await stream({ sessionId: first.sessionId, message: 'what time is it' });
      assert.equal(events[0]!.data.sessionId, first.sessionId);
      assert.equal(events.filter((e) => e.event === 'text_delta').map((e) => e.data.delta).join(''), 'I only say hello.');
      assert.equal((await session(first.sessionId)).body.session.messageCount, 4);
    });

    test('bad input to /chat/stream is a JSON error before any stream', async () => {
      const unknown = await stream({ sessionId: `c${'0'.repeat(24)}`, message: 'hi' });
      assert.equal(unknown.res.status, 404);
      assert.match(unknown.contentType, /^application\/json/);
      assert.equal(unknown.json.success, false);
      assert.equal(unknown.json.error.code, 'NOT_FOUND');
      assert.equal(unknown.json.error.requestId, unknown.res.headers.get('x-request-id'));
      const bad = await stream({ message: '' });
      assert.equal(bad.res.status, 400);
      assert.equal(bad.json.error.code, 'VALIDATION_ERROR');
      const neither = await stream({ message: 'hi' });
      assert.equal(neither.res.status, 400);
      assert.equal(neither.json.error.code, 'BAD_REQUEST');
    });

    test('no entry agent is refused as JSON before the stream: nothing compiled 400, unknown agentName 404', async () => {
      const empty = await newProject('Stream without agents');
      const none = await stream({ projectId: empty, message: 'hi' });
      assert.equal(none.res.status, 400);
      assert.match(none.contentType, /^application\/json/);
      assert.equal(none.json.error.code, 'VALIDATION_ERROR');
      const unknown = await stream({ projectId: server.projectId, agentName: 'nobody', message: 'hi' });
      assert.equal(unknown.res.status, 404);
      assert.equal(unknown.json.error.code, 'NOT_FOUND');
      const draft = await call(server.base, 'POST', `/api/projects/${empty}/agents`, { body: { name: 'draft', dslContent: 'AGENT: draft' } });
      assert.equal(draft.status, 201);
      const uncompiled = await stream({ projectId: empty, agentName: 'draft', message: 'hi' });
      assert.equal(uncompiled.res.status, 400);
      assert.equal(uncompiled.json.error.code, 'VALIDATION_ERROR');
      assert.equal((await call(server.base, 'GET', `/api/projects/${empty}/sessions`)).body.pagination.total, 0);
    });

    test('a stream with a slow turn carries `: heartbeat` comments (PARLEY_SSE_HEARTBEAT_MS=20)', async () => {
      // Three levels of ten DELEGATE steps each: a thousand delegations across actor workers,
      // so the turn lasts many heartbeat intervals.
      const project = await newProject('Slow turn project');
      const fanOut = (name: string, target: string): string => [
        `AGENT: ${name}`, 'FLOW: go', '  TRIGGER: pattern /./',
        ...Array.from({ length: 10 }, (_, i) => `  DELEGATE: ${target} TASK "step {{message}}" AS r${i}`),
        `  RESPOND: "${name} done"`, 'FALLBACK: "fallback"',
      ].join('\n');
      await deployAgent(server, 'leaf', { projectId: project, source: 'AGENT: leaf\nFALLBACK: "leaf"' });
      await deployAgent(server, 'middle', { projectId: project, source: fanOut('middle', 'leaf') });
      await deployAgent(server, 'upper', { projectId: project, source: fanOut('upper', 'middle') });
      await deployAgent(server, 'slow', { projectId: project, source: fanOut('slow', 'upper') });
      const { res, events, comments } = await stream({ projectId: project, agentName: 'slow', message: 'go' });
      assert.equal(res.status, 200);
      const complete = events.at(-1)!;
      assert.equal(complete.event, 'complete', JSON.stringify(events.at(-1)));
      // (The turn's latency is in the message: were it ever under the 20 ms interval, this test needs a slower turn.)
      assert.ok(comments.length >= 1, `no heartbeat in a stream whose turn took ${complete.data.latencyMs} ms`);
      for (const c of comments) assert.equal(c, 'heartbeat');
      const traces = events.filter((e) => e.event === 'trace');
      assert.equal(traces.length, 10);
      for (const t of traces) assert.equal(t.data.type, 'delegate');
      assert.equal(events.filter((e) => e.event === 'text_delta').map((e) => e.data.delta).join(''), 'slow done');
    });
  });

  describe('multi-agent: GATHER, DELEGATE, HANDOFF', () => {
    test('a GATHER conversation over several turns ends with a DELEGATE and the refund', async () => {
      const t1 = await chat(server, { projectId: server.projectId, agentName: 'billing_support', message: 'I want a refund' });
      assert.equal(t1.agentName, 'billing_support');
      assert.equal(t1.response, "What's the invoice number?");
      const t2 = await chat(server, { sessionId: t1.sessionId, message: 'I have no idea' });
      assert.equal(t2.response, "Sorry, that doesn't look right. What's the invoice number?");
      const t3 = await chat(server, { sessionId: t1.sessionId, message: 'INV-42' });
      assert.equal(t3.response, 'Why do you want a refund? (damaged, late or other)');
      assert.deepEqual(t3.traceEvents, []);
      const t4 = await chat(server, { sessionId: t1.sessionId, message: 'damaged' });
      assert.equal(t4.response, 'Refund for INV-42 started.');
      assert.equal(t4.agentName, 'billing_support');
      assert.equal(t4.traceEvents.length, 1);
      const delegate = t4.traceEvents[0]!;
      assert.equal(delegate.type, 'delegate');
      assert.equal(delegate.data.fromAgent, 'billing_support');
      assert.equal(delegate.data.toAgent, 'fraud_check');
      assert.equal(delegate.data.task, 'assess refund of INV-42 because damaged');
      assert.equal(typeof delegate.data.duration_ms, 'number');
      assert.ok(delegate.data.duration_ms >= 0);

      const detail = await session(t1.sessionId);
      assert.equal(detail.body.session.messageCount, 8);
      assert.equal(detail.body.session.handoffCount, 0);
      assert.deepEqual(detail.body.session.agentVersions, { billing_support: 1, fraud_check: 1 });
      const messages = await call(server.base, 'GET', `${P}/sessions/${t1.sessionId}/messages`);
      assert.deepEqual(messages.body.messages.at(-1).traceEvents, t4.traceEvents);
    });

    test('slots given in the first message are used at once', async () => {
      const t1 = await chat(server, { projectId: server.projectId, agentName: 'billing_support', message: 'I want a refund for INV-42' });
      assert.equal(t1.response, 'Why do you want a refund? (damaged, late or other)');
      const t2 = await chat(server, { sessionId: t1.sessionId, message: 'it came late' });
      assert.equal(t2.response, 'Refund for INV-42 started.');
    });

    test('a handoff to human_desk: handoff trace event and handoffCount 1', async () => {
      const r = await chat(server, { projectId: server.projectId, agentName: 'billing_support', message: 'I want to speak to a human' });
      assert.equal(r.agentName, 'human_desk');
      assert.match(r.response, /member of our team/);
      assert.equal(r.traceEvents.length, 1);
      const h = r.traceEvents[0]!;
      assert.equal(h.type, 'handoff');
      assert.equal(h.data.fromAgent, 'billing_support');
      assert.equal(h.data.toAgent, 'human_desk');
      assert.equal(typeof h.data.reason, 'string');
      assert.ok(h.data.reason.length > 0);
      assert.match(h.data.timestamp, ISO);

      const detail = await session(r.sessionId);
      assert.equal(detail.body.session.handoffCount, 1);
      assert.equal(detail.body.session.entryAgent, 'billing_support');
      assert.equal(detail.body.session.currentAgent, 'human_desk');

      // human_desk keeps the conversation; agentName on a later turn is ignored.
      const next = await chat(server, { sessionId: r.sessionId, agentName: 'greeter', message: 'hello?' });
      assert.equal(next.agentName, 'human_desk');
      assert.deepEqual(next.traceEvents, []);
      assert.equal((await session(r.sessionId)).body.session.handoffCount, 1);

      const list = await call(server.base, 'GET', `${P}/sessions`);
      assert.equal(list.body.sessions.find((s: { sessionId: string }) => s.sessionId === r.sessionId).handoffCount, 1);
    });

    test('a risky refund: DELEGATE answers high, then HANDOFF "risky refund"', async () => {
      const r = await chat(server, { projectId: server.projectId, agentName: 'billing_support', message: 'refund INV-9 please, it arrived damaged' });
      assert.deepEqual(r.traceEvents.map((t) => t.type), ['delegate', 'handoff']);
      assert.equal(r.traceEvents[0]!.data.task, 'assess refund of INV-9 because damaged');
      assert.deepEqual({ ...r.traceEvents[1]!.data, timestamp: undefined }, { fromAgent: 'billing_support', toAgent: 'human_desk', reason: 'risky refund', timestamp: undefined });
      assert.equal(r.agentName, 'human_desk');
      assert.equal((await session(r.sessionId)).body.session.handoffCount, 1);
    });

    test('a session keeps the versions it first used, delegates included', async () => {
      const project = await newProject('Pinning project');
      await deployAgents(server, ['billing_support', 'human_desk', 'fraud_check'], { projectId: project });
      const first = await chat(server, { projectId: project, message: 'refund INV-42, it is damaged' });
      assert.equal(first.response, 'Refund for INV-42 started.');
      // fraud_check v2 rates every refund as high risk.
      const put = await call(server.base, 'PUT', `/api/projects/${project}/agents/fraud_check/dsl`, { body: { dslContent: 'AGENT: fraud_check\nFALLBACK: "high"' } });
      assert.equal(put.status, 200);
      const v2 = await call(server.base, 'POST', `/api/projects/${project}/agents/fraud_check/versions`);
      assert.equal(v2.body.version.version, 2);
      // The old session still delegates to version 1...
      const again = await chat(server, { sessionId: first.sessionId, message: 'another refund: INV-43, it came late' });
      assert.equal(again.response, 'Refund for INV-43 started.');
      assert.deepEqual(again.traceEvents.map((t) => t.type), ['delegate']);
      const detail = await call(server.base, 'GET', `/api/projects/${project}/sessions/${first.sessionId}`);
      assert.deepEqual(detail.body.session.agentVersions, { billing_support: 1, fraud_check: 1 });
      // ...while a new session uses version 2.
      const fresh = await chat(server, { projectId: project, message: 'refund INV-44, it came late' });
      assert.deepEqual(fresh.traceEvents.map((t) => t.type), ['delegate', 'handoff']);
      assert.equal(fresh.agentName, 'human_desk');
      const freshDetail = await call(server.base, 'GET', `/api/projects/${project}/sessions/${fresh.sessionId}`);
      assert.deepEqual(freshDetail.body.session.agentVersions, { billing_support: 1, fraud_check: 2, human_desk: 1 });
    });

    test('trace events are streamed as `trace` events before usage', async () => {
      const { events } = await stream({ projectId: server.projectId, agentName: 'billing_support', message: 'I want to speak to a human' });
      const names = events.map((e) => e.event);
      assert.deepEqual(names.slice(-3), ['trace', 'usage', 'complete']);
      const trace = events.at(-3)!.data;
      assert.equal(trace.type, 'handoff');
      assert.equal(trace.data.toAgent, 'human_desk');
      assert.equal(events.at(-1)!.data.agentName, 'human_desk');
      assert.match(events.filter((e) => e.event === 'text_delta').map((e) => e.data.delta).join(''), /member of our team/);
    });
  });
});
