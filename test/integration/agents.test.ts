import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, call, deployAgent, deployAgents, example, startTestServer, type TestServer } from './harness.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const CUID = /^c[0-9a-z]{24}$/;

describe('agents and versions', () => {
  let server: TestServer;
  let P: string;
  let slug: string;
  before(async () => {
    server = await startTestServer();
    P = `/api/projects/${server.projectId}`;
    slug = (await call(server.base, 'GET', P)).body.project.slug;
  });
  after(async () => {
    await server.close();
  });

  test('create answers 201 with a ProjectAgent (versionCount 0, working copy stored)', async () => {
    const source = example('greeter');
    const res = await call(server.base, 'POST', `${P}/agents`, { body: { name: 'greeter', description: 'Says hello', dslContent: source } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    const a = res.body.agent;
    assert.match(a.id, CUID);
    assert.equal(a.name, 'greeter');
    assert.equal(a.agentPath, `${slug}/greeter`);
    assert.equal(a.description, 'Says hello');
    assert.equal(a.versionCount, 0);
    assert.deepEqual(a.activeVersions, {});
    assert.match(a.createdAt, ISO);
    assert.match(a.updatedAt, ISO);
    assert.equal(a.dslContent, source);
    // No description: null.
    const bare = await call(server.base, 'POST', `${P}/agents`, { body: { name: 'bare', dslContent: 'AGENT: bare\nFALLBACK: "bare"' } });
    assert.equal(bare.status, 201);
    assert.equal(bare.body.agent.description, null);
  });

  test('a duplicate name in the project: 409 CONFLICT', async () => {
    const res = await call(server.base, 'POST', `${P}/agents`, { body: { name: 'greeter', dslContent: 'AGENT: greeter' } });
    assertError(res, 409, 'CONFLICT', /greeter/);
    // The original is untouched.
    const detail = await call(server.base, 'GET', `${P}/agents/greeter`);
    assert.equal(detail.body.agent.dslContent, example('greeter'));
  });

  test('a bad name: 400 VALIDATION_ERROR naming the field', async () => {
    for (const name of ['Greeter', '1agent', 'has-dash', 'has space', '', 'a'.repeat(65), '../etc', 'ünïcode']) {
      const res = await call(server.base, 'POST', `${P}/agents`, { body: { name, dslContent: 'AGENT: x' } });
      assertError(res, 400, 'VALIDATION_ERROR');
      assert.equal(res.body.error.details.field, 'name', `${name}: ${JSON.stringify(res.body)}`);
    }
  });

  test('missing or empty dslContent on create: 400', async () => {
    assertError(await call(server.base, 'POST', `${P}/agents`, { body: { name: 'nodsl' } }), 400, 'VALIDATION_ERROR', /dslContent/);
    assertError(await call(server.base, 'POST', `${P}/agents`, { body: { name: 'nodsl', dslContent: '' } }), 400, 'VALIDATION_ERROR', /dslContent/);
    assertError(await call(server.base, 'POST', `${P}/agents`, { body: { name: 'nodsl', dslContent: 42 } }), 400, 'VALIDATION_ERROR', /dslContent/);
  });

  test('project agents list (without dslContent) and detail (with it)', async () => {
    const list = await call(server.base, 'GET', `${P}/agents`);
    assert.equal(list.status, 200);
    assert.equal(list.body.success, true);
    assert.deepEqual(list.body.agents.map((a: { name: string }) => a.name).sort(), ['bare', 'greeter']);
    const greeter = list.body.agents.find((a: { name: string }) => a.name === 'greeter');
    assert.equal(greeter.dslContent, undefined);
    assert.equal(greeter.versionCount, 0);
    assert.equal(greeter.agentPath, `${slug}/greeter`);

    const detail = await call(server.base, 'GET', `${P}/agents/greeter`);
    assert.equal(detail.status, 200);
    assert.equal(detail.body.agent.id, greeter.id);
    assert.equal(detail.body.agent.dslContent, example('greeter'));
    assert.deepEqual(Object.keys(detail.body.agent).sort(), ['activeVersions', 'agentPath', 'createdAt', 'description', 'dslContent', 'id', 'name', 'updatedAt', 'versionCount']);
  });

  test('GET /api/agents: {success, total, agents:[{id, name}]}', async () => {
    const res = await call(server.base, 'GET', '/api/agents');
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.equal(res.body.total, 2);
    assert.equal(res.body.agents.length, 2);
    for (const a of res.body.agents) assert.deepEqual(Object.keys(a).sort(), ['id', 'name']);
    assert.deepEqual(res.body.agents.map((a: { name: string }) => a.name).sort(), ['bare', 'greeter']);
    const narrowed = await call(server.base, 'GET', `/api/agents?projectId=${server.projectId}`);
    assert.equal(narrowed.body.total, 2);
    assertError(await call(server.base, 'GET', `/api/agents?projectId=c${'0'.repeat(24)}`), 404, 'NOT_FOUND');
  });

  test('GET /api/agents/{name}: dslContent and Cache-Control private, max-age=300', async () => {
    const res = await call(server.base, 'GET', '/api/agents/greeter');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'private, max-age=300');
    assert.equal(res.body.success, true);
    assert.equal(res.body.agent.name, 'greeter');
    assert.match(res.body.agent.id, CUID);
    assert.equal(res.body.agent.dslContent, example('greeter'));
    const missing = await call(server.base, 'GET', '/api/agents/nobody_here');
    assertError(missing, 404, 'NOT_FOUND');
    assert.equal(missing.headers.get('cache-control'), null);
  });

  test('PUT dsl updates the working copy only: {success, updatedAt}, versionCount unchanged', async () => {
    const before = (await call(server.base, 'GET', `${P}/agents/bare`)).body.agent;
    const next = 'AGENT: bare\nFALLBACK: "bare v2"';
    const res = await call(server.base, 'PUT', `${P}/agents/bare/dsl`, { body: { dslContent: next } });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['success', 'updatedAt']);
    assert.equal(res.body.success, true);
    assert.match(res.body.updatedAt, ISO);
    assert.ok(res.body.updatedAt >= before.updatedAt);
    const after = (await call(server.base, 'GET', `${P}/agents/bare`)).body.agent;
    assert.equal(after.dslContent, next);
    assert.equal(after.versionCount, 0);
    assert.equal(after.updatedAt, res.body.updatedAt);
    assert.equal(after.createdAt, before.createdAt);
    const versions = await call(server.base, 'GET', `${P}/agents/bare/versions`);
    assert.deepEqual(versions.body.versions, []);
  });

  test('PUT dsl with empty or missing dslContent: 400', async () => {
    assertError(await call(server.base, 'PUT', `${P}/agents/bare/dsl`, { body: { dslContent: '' } }), 400, 'VALIDATION_ERROR', /dslContent/);
    assertError(await call(server.base, 'PUT', `${P}/agents/bare/dsl`, { body: {} }), 400, 'VALIDATION_ERROR', /dslContent/);
    assertError(await call(server.base, 'PUT', `${P}/agents/bare/dsl`, { body: { dslContent: 'AGENT: bare', name: 'other' } }), 400, 'VALIDATION_ERROR', /name/);
  });

  test('compile answers 201 with version 1, then 2; GET versions lists them', async () => {
    const v1 = await call(server.base, 'POST', `${P}/agents/greeter/versions`);
    assert.equal(v1.status, 201, JSON.stringify(v1.body));
    assert.equal(v1.body.success, true);
    assert.equal(v1.body.version.version, 1);
    assert.equal(v1.body.version.agentName, 'greeter');
    assert.equal(v1.body.version.projectId, server.projectId);
    assert.equal(v1.body.version.dslContent, example('greeter'));
    assert.match(v1.body.version.createdAt, ISO);
    // The credential that compiled it (the bootstrap API key).
    assert.match(v1.body.version.createdBy, /^apikey:c[0-9a-z]{24}$/);
    assert.equal(v1.body.version.program, undefined, 'the compiled program is not exposed');

    const changed = example('greeter').replace('Hello from greeter!', 'Hello again!');
    assert.equal((await call(server.base, 'PUT', `${P}/agents/greeter/dsl`, { body: { dslContent: changed } })).status, 200);
    const v2 = await call(server.base, 'POST', `${P}/agents/greeter/versions`);
    assert.equal(v2.status, 201);
    assert.equal(v2.body.version.version, 2);
    assert.equal(v2.body.version.dslContent, changed);

    const detail = await call(server.base, 'GET', `${P}/agents/greeter`);
    assert.equal(detail.body.agent.versionCount, 2);

    const versions = await call(server.base, 'GET', `${P}/agents/greeter/versions`);
    assert.equal(versions.status, 200);
    assert.equal(versions.body.success, true);
    assert.deepEqual(versions.body.versions.map((v: { version: number }) => v.version), [1, 2]);
    assert.equal(versions.body.versions[0].dslContent, example('greeter'));
    assert.equal(versions.body.versions[1].dslContent, changed);
  });

  test('a compile error: 400 VALIDATION_ERROR, "Line 3, …" and details.errors with line and column', async () => {
    const broken = ['AGENT: broken', 'MODEL: builtin', 'FLWO: refund', 'FALLBACK: "x"'].join('\n');
    assert.equal((await call(server.base, 'POST', `${P}/agents`, { body: { name: 'broken', dslContent: broken } })).status, 201);
    const res = await call(server.base, 'POST', `${P}/agents/broken/versions`);
    assertError(res, 400, 'VALIDATION_ERROR', /^Line 3, column \d+: /);
    const errors = res.body.error.details.errors;
    assert.ok(Array.isArray(errors) && errors.length >= 1);
    assert.equal(errors[0].line, 3);
    assert.equal(typeof errors[0].column, 'number');
    assert.ok(errors[0].column >= 1);
    assert.equal(typeof errors[0].message, 'string');
    assert.ok(res.body.error.message.includes('Line'));
    // No version was created.
    const detail = await call(server.base, 'GET', `${P}/agents/broken`);
    assert.equal(detail.body.agent.versionCount, 0);
    assert.deepEqual((await call(server.base, 'GET', `${P}/agents/broken/versions`)).body.versions, []);
  });

  test('every compile error is listed, each with its own line', async () => {
    const source = ['AGENT: many', 'FLOW: a', '  TRIGGER: pattern /(/', '  RESPOND: "x"', 'FLWO: b', 'FALLBACK: "x"'].join('\n');
    assert.equal((await call(server.base, 'POST', `${P}/agents`, { body: { name: 'many', dslContent: source } })).status, 201);
    const res = await call(server.base, 'POST', `${P}/agents/many/versions`);
    assertError(res, 400, 'VALIDATION_ERROR', /^Line 3, /);
    const lines = res.body.error.details.errors.map((e: { line: number }) => e.line);
    assert.ok(lines.includes(3) && lines.includes(5), JSON.stringify(res.body.error.details.errors));
  });

  test('the AGENT name must equal the agent’s name', async () => {
    assert.equal((await call(server.base, 'POST', `${P}/agents`, { body: { name: 'named', dslContent: 'AGENT: other_name\nFALLBACK: "x"' } })).status, 201);
    const res = await call(server.base, 'POST', `${P}/agents/named/versions`);
    assertError(res, 400, 'VALIDATION_ERROR', /^Line 1, column 1: /);
    assert.equal(res.body.error.details.errors[0].line, 1);
  });

  test('an unknown agent: 404 on detail, dsl, versions and compile', async () => {
    for (const [method, path, body] of [
      ['GET', `${P}/agents/nobody`, undefined],
      ['PUT', `${P}/agents/nobody/dsl`, { dslContent: 'AGENT: nobody' }],
      ['GET', `${P}/agents/nobody/versions`, undefined],
      ['POST', `${P}/agents/nobody/versions`, undefined],
      ['GET', `${P}/agents/Not-A-Name/versions`, undefined],
      ['GET', '/api/agents/nobody', undefined],
    ] as const) {
      assertError(await call(server.base, method, path, { body }), 404, 'NOT_FOUND');
    }
  });

  test('an unknown project: 404', async () => {
    const ghost = `/api/projects/c${'9'.repeat(24)}`;
    assertError(await call(server.base, 'GET', `${ghost}/agents`), 404, 'NOT_FOUND');
    assertError(await call(server.base, 'POST', `${ghost}/agents`, { body: { name: 'x', dslContent: 'AGENT: x' } }), 404, 'NOT_FOUND');
    assertError(await call(server.base, 'GET', `/api/projects/not-a-cuid/agents`), 404, 'NOT_FOUND');
  });

  test('deployAgent of every example compiles them (they are valid agents)', async () => {
    await deployAgents(server, ['billing_support', 'human_desk', 'fraud_check']);
    const list = await call(server.base, 'GET', `${P}/agents`);
    for (const name of ['billing_support', 'human_desk', 'fraud_check']) {
      assert.equal(list.body.agents.find((a: { name: string }) => a.name === name)?.versionCount, 1, name);
    }
  });
});
