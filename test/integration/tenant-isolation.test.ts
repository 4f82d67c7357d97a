import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cuid } from '../../runtime/index.js';
import { ADMIN_KEY, assertError, call, chat, createTenant, deployAgent, type ApiResponse, type TestServer, type TestTenant, startTestServer } from './harness.js';

/**
 * Tenant A is the bootstrap tenant (ADMIN_KEY); tenant B is made through the operator API. With
 * B's admin key, every one of A's resources must answer exactly like a resource that does not
 * exist: 404 NOT_FOUND with the same message.
 */
describe('tenant isolation', () => {
  let server: TestServer;
  let B: TestTenant;
  let aProject: string;
  let aSession: string;
  let aKeyId: string;
  let aDeployment: string;
  let aGreeterDsl: string;

  before(async () => {
    server = await startTestServer();
    aProject = server.projectId;
    await deployAgent(server, 'greeter');
    aGreeterDsl = (await call(server.base, 'GET', `/api/projects/${aProject}/agents/greeter`)).body.agent.dslContent;
    aSession = (await chat(server, { projectId: aProject, message: 'hi' })).sessionId;
    // An agent name only A ever has (B makes its own greeter along the way).
    await deployAgent(server, 'a_only', { source: 'AGENT: a_only\nFALLBACK: "A only"' });
    const key = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'A second key', role: 'developer' } });
    assert.equal(key.status, 201);
    aKeyId = key.body.apiKey.id;
    const deployment = await call(server.base, 'POST', `/api/projects/${aProject}/deployments`, { body: { environment: 'dev', entryAgentName: 'greeter', agentVersionManifest: { greeter: '1' } } });
    assert.equal(deployment.status, 201);
    aDeployment = deployment.body.deployment.id;
    B = await createTenant(server, 'Tenant B');
    // B has an agent of its own, under another name, so its lists are not trivially empty.
    await deployAgent(server, 'helper', { projectId: B.projectId, key: B.key, source: 'AGENT: helper\nFALLBACK: "B helper"' });
  });
  after(async () => {
    await server.close();
  });

  /** Same status, code and message for the foreign resource and for a missing one. */
  function assertSameAsMissing(foreign: ApiResponse, missing: ApiResponse, what: string): void {
    assert.equal(foreign.status, 404, `${what}: ${foreign.status} ${JSON.stringify(foreign.body)}`);
    assertError(foreign, 404, 'NOT_FOUND');
    assertError(missing, 404, 'NOT_FOUND');
    assert.equal(foreign.body.error.message, missing.body.error.message, `${what}: messages differ`);
    assert.deepEqual(foreign.body.error.details, missing.body.error.details, `${what}: details differ`);
  }

  const asB = (method: string, path: string, body?: unknown) => call(server.base, method, path, { key: B.key, body });

  test('B sees only its own project, agents, keys and sessions in lists', async () => {
    const projects = await asB('GET', '/api/projects');
    assert.deepEqual(projects.body.projects.map((p: { id: string }) => p.id), [B.projectId]);
    const agents = await asB('GET', '/api/agents');
    assert.equal(agents.status, 200);
    assert.deepEqual(agents.body.agents.map((a: { name: string }) => a.name), ['helper']);
    assert.equal(agents.body.total, 1);
    const keys = await asB('GET', '/api/api-keys');
    assert.deepEqual(keys.body.apiKeys.map((k: { id: string }) => k.id), [B.keyId]);
    const sessions = await asB('GET', `/api/projects/${B.projectId}/sessions`);
    assert.equal(sessions.body.pagination.total, 0);
    const users = await asB('GET', '/api/users');
    assert.deepEqual(users.body.users, []);
  });

  test("A's project, agents, versions and sessions answer 404 like nonexistent ids", async () => {
    const ghostProject = cuid();
    const ghostSession = cuid();
    const pairs: [string, string, string, unknown?][] = [
      ['project detail', 'GET', '/api/projects/{p}'],
      ['project update', 'PATCH', '/api/projects/{p}', { name: 'taken over' }],
      ['agents list', 'GET', '/api/projects/{p}/agents'],
      ['agent create', 'POST', '/api/projects/{p}/agents', { name: 'intruder', dslContent: 'AGENT: intruder' }],
      ['agent detail', 'GET', '/api/projects/{p}/agents/greeter'],
      ['agent dsl', 'PUT', '/api/projects/{p}/agents/greeter/dsl', { dslContent: 'AGENT: greeter\nFALLBACK: "pwned"' }],
      ['versions list', 'GET', '/api/projects/{p}/agents/greeter/versions'],
      ['compile', 'POST', '/api/projects/{p}/agents/greeter/versions'],
      ['sessions list', 'GET', '/api/projects/{p}/sessions'],
      ['session detail', 'GET', '/api/projects/{p}/sessions/{s}'],
      ['session messages', 'GET', '/api/projects/{p}/sessions/{s}/messages'],
      ['agents of a project', 'GET', '/api/agents?projectId={p}'],
      ['agent by name in a project', 'GET', '/api/agents/greeter?projectId={p}'],
    ];
    for (const [what, method, template, body] of pairs) {
      const foreign = await asB(method, template.replace('{p}', aProject).replace('{s}', aSession), body);
      const missing = await asB(method, template.replace('{p}', ghostProject).replace('{s}', ghostSession), body);
      assertSameAsMissing(foreign, missing, what);
    }
    // A's session id under B's own project: same as a missing session.
    for (const suffix of ['', '/messages']) {
      const foreign = await asB('GET', `/api/projects/${B.projectId}/sessions/${aSession}${suffix}`);
      const missing = await asB('GET', `/api/projects/${B.projectId}/sessions/${ghostSession}${suffix}`);
      assertSameAsMissing(foreign, missing, `A's session under B's project${suffix}`);
    }
  });

  test("chat: continuing A's session or starting one in A's project answers 404", async () => {
    const ghostSession = cuid();
    for (const endpoint of ['send', 'stream']) {
      const foreign = await asB('POST', `/api/v1/chat/${endpoint}`, { sessionId: aSession, message: 'hi' });
      const missing = await asB('POST', `/api/v1/chat/${endpoint}`, { sessionId: ghostSession, message: 'hi' });
      assertSameAsMissing(foreign, missing, `chat/${endpoint} with A's sessionId`);
    }
    const withOwnProject = await asB('POST', '/api/v1/chat/send', { sessionId: aSession, projectId: B.projectId, message: 'hi' });
    assertSameAsMissing(withOwnProject, await asB('POST', '/api/v1/chat/send', { sessionId: ghostSession, projectId: B.projectId, message: 'hi' }), "A's session with B's project");
    for (const endpoint of ['agent', 'send', 'stream']) {
      const foreign = await asB('POST', `/api/v1/chat/${endpoint}`, { projectId: aProject, message: 'hi' });
      const missing = await asB('POST', `/api/v1/chat/${endpoint}`, { projectId: cuid(), message: 'hi' });
      assertSameAsMissing(foreign, missing, `chat/${endpoint} with A's projectId`);
    }
    // A's session is untouched: still 2 messages.
    const detail = await call(server.base, 'GET', `/api/projects/${aProject}/sessions/${aSession}`);
    assert.equal(detail.body.session.messageCount, 2);
  });

  test("GET /api/agents/{A's agent name} is 404 for B; B's own agent of that name is B's", async () => {
    const foreign = await asB('GET', '/api/agents/greeter');
    const missing = await asB('GET', '/api/agents/no_such_agent');
    assertSameAsMissing(foreign, missing, 'agent by name');
    await deployAgent(server, 'greeter', { projectId: B.projectId, key: B.key, source: 'AGENT: greeter\nFALLBACK: "B greeter"' });
    const own = await asB('GET', '/api/agents/greeter');
    assert.equal(own.status, 200);
    assert.equal(own.body.agent.dslContent, 'AGENT: greeter\nFALLBACK: "B greeter"');
    const aView = await call(server.base, 'GET', '/api/agents/greeter');
    assert.equal(aView.body.agent.dslContent, aGreeterDsl);
    // And chatting with B's greeter in B's project never reaches A's.
    const r = await chat(server, { projectId: B.projectId, agentName: 'greeter', message: 'hi' }, { key: B.key });
    assert.equal(r.response, 'B greeter');
  });

  test("deleting A's API key id answers 404 like a missing id, and A's key keeps working", async () => {
    const foreign = await asB('DELETE', `/api/api-keys/${aKeyId}`);
    const missing = await asB('DELETE', `/api/api-keys/${cuid()}`);
    assertSameAsMissing(foreign, missing, "A's API key");
    const keys = await call(server.base, 'GET', '/api/api-keys');
    assert.ok(keys.body.apiKeys.some((k: { id: string }) => k.id === aKeyId));
    // The bootstrap key's id too.
    const bootstrapKeyId = keys.body.apiKeys.find((k: { id: string }) => k.id !== aKeyId).id;
    assertSameAsMissing(await asB('DELETE', `/api/api-keys/${bootstrapKeyId}`), missing, 'bootstrap key');
    assert.equal((await call(server.base, 'GET', '/api/projects', { key: ADMIN_KEY })).status, 200);
  });

  test('route walk: every {projectId} route answers 404 to B for A’s project, exactly like a missing project', async () => {
    const routes = server.parley.app.router.routes().filter((r) => r.auth === 'principal' && r.path.includes('{projectId}'));
    assert.ok(routes.length >= 10, `only ${routes.length} routes found`);
    // A span of A's session (analytics are written in batches: wait for the turn's span).
    let aSpan = '';
    for (let i = 0; i < 60 && !aSpan; i++) {
      const traces = await call(server.base, 'GET', `/api/projects/${aProject}/sessions/${aSession}/traces`, { key: ADMIN_KEY });
      aSpan = traces.body?.data?.roots?.find((r: { span_id: string | null }) => r.span_id)?.span_id ?? '';
      if (!aSpan) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(aSpan, 'A’s session has a turn span');
    // Plausible values for A's resources and for missing ones; a new parameter must be added here.
    const aParams: Record<string, string> = { projectId: aProject, agentName: 'a_only', sessionId: aSession, name: 'a_only', keyId: aKeyId, deploymentId: aDeployment, spanId: aSpan };
    const ghostParams: Record<string, string> = { projectId: cuid(), agentName: 'no_such_agent', sessionId: cuid(), name: 'no_such_agent', keyId: cuid(), deploymentId: cuid(), spanId: 'no-such-span' };
    // Plausible, valid bodies (so a 404 cannot come from a refused body) and an empty one (so
    // validation cannot run before the lookup).
    const plausibleBodies: Record<string, unknown> = {
      'POST /api/projects/{projectId}/agents': { name: 'walker', dslContent: 'AGENT: walker\nFALLBACK: "w"' },
      'PUT /api/projects/{projectId}/agents/{agentName}/dsl': { dslContent: 'AGENT: a_only\nFALLBACK: "walked"' },
      'PATCH /api/projects/{projectId}': { name: 'walked', defaultAgent: null },
    };
    const fill = (path: string, values: Record<string, string>, overrides: Record<string, string> = {}): string =>
      path.replace(/\{(\w+)\}/g, (_, p: string) => {
        const v = overrides[p] ?? values[p];
        assert.ok(v !== undefined, `the walk has no value for {${p}} in ${path}: add one`);
        return encodeURIComponent(v);
      });

    let checked = 0;
    for (const route of routes) {
      const id = `${route.method} ${route.path}`;
      const bodies: unknown[] = route.method === 'GET' || route.method === 'DELETE' ? [undefined] : [undefined, {}, ...(id in plausibleBodies ? [plausibleBodies[id]] : [])];
      for (const body of bodies) {
        const foreign = await asB(route.method, fill(route.path, aParams), body);
        const missing = await asB(route.method, fill(route.path, ghostParams), body);
        assertSameAsMissing(foreign, missing, `${id} body=${JSON.stringify(body)}`);
        checked++;
        // With B's own project and A's other ids (sessions, agents): still exactly a missing one.
        const others = (route.path.match(/\{(\w+)\}/g) ?? []).length;
        if (others > 1) {
          const foreignInB = await asB(route.method, fill(route.path, aParams, { projectId: B.projectId }), body);
          const missingInB = await asB(route.method, fill(route.path, ghostParams, { projectId: B.projectId }), body);
          assertSameAsMissing(foreignInB, missingInB, `${id} under B's project body=${JSON.stringify(body)}`);
          checked++;
        }
      }
    }
    assert.ok(checked > routes.length);

    // Nothing of A's changed.
    const project = await call(server.base, 'GET', `/api/projects/${aProject}`);
    assert.notEqual(project.body.project.name, 'walked');
    const greeter = await call(server.base, 'GET', `/api/projects/${aProject}/agents/greeter`);
    assert.equal(greeter.body.agent.dslContent, aGreeterDsl);
    const aOnly = await call(server.base, 'GET', `/api/projects/${aProject}/agents/a_only`);
    assert.equal(aOnly.body.agent.dslContent, 'AGENT: a_only\nFALLBACK: "A only"');
    assert.equal(aOnly.body.agent.versionCount, 1);
    const agents = await call(server.base, 'GET', `/api/projects/${aProject}/agents`);
    assert.deepEqual(agents.body.agents.map((a: { name: string }) => a.name), ['a_only', 'greeter']);
    const sessions = await call(server.base, 'GET', `/api/projects/${aProject}/sessions`);
    assert.equal(sessions.body.pagination.total, 1);
  });
});
