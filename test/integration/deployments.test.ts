import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admitContinuedSession, type Deployment } from '../../actors/index.js';
import { assertError, call, chat, createTenant, deployAgent, startTestServer, type TestServer, type TestTenant } from './harness.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const CUID = /^c[0-9a-z]{24}$/;
const FULL_KEYS = [
  'agentVersionManifest', 'createdAt', 'createdBy', 'description', 'endpointSlug', 'entryAgentName', 'environment', 'id', 'label',
  'modelOverrides', 'projectId', 'promotedFromId', 'retiredAt', 'settingsVersionId', 'status', 'workflowVersionManifest',
];

/** An agent source that always answers `text`. */
const answering = (name: string, text: string): string => `AGENT: ${name}\nMODEL: builtin\nFALLBACK: "${text}"`;

describe('deployments', () => {
  let server: TestServer;
  let other: TestTenant;
  let P: string;
  let projectSlug: string;

  /** A fresh project (deployments are per project and environment, so tests do not share one). */
  async function newProject(name: string): Promise<{ id: string; slug: string; path: string }> {
    const res = await call(server.base, 'POST', '/api/projects', { body: { name } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return { id: res.body.project.id, slug: res.body.project.slug, path: `/api/projects/${res.body.project.id}` };
  }

  /** Replaces an agent's working copy and compiles it into the next version. */
  async function recompile(projectId: string, name: string, source: string): Promise<number> {
    const put = await call(server.base, 'PUT', `/api/projects/${projectId}/agents/${name}/dsl`, { body: { dslContent: source } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const res = await call(server.base, 'POST', `/api/projects/${projectId}/agents/${name}/versions`);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.version.version;
  }

  async function createDeployment(path: string, body: Record<string, unknown>, key?: string): Promise<any> {
    const res = await call(server.base, 'POST', `${path}/deployments`, { body, key });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  }

  before(async () => {
    server = await startTestServer();
    other = await createTenant(server, 'Other tenant');
    P = `/api/projects/${server.projectId}`;
    projectSlug = (await call(server.base, 'GET', P)).body.project.slug;
    await deployAgent(server, 'alpha', { source: answering('alpha', 'alpha v1') });
    await deployAgent(server, 'beta', { source: answering('beta', 'beta v1') });
    await recompile(server.projectId, 'beta', answering('beta', 'beta v2'));
    const draft = await call(server.base, 'POST', `${P}/agents`, { body: { name: 'draft', dslContent: answering('draft', 'never compiled') } });
    assert.equal(draft.status, 201);
  });
  after(async () => {
    await server.close();
  });

  test('create with every field: 201 with the whole Deployment', async () => {
    const body = await createDeployment(P, {
      environment: 'dev', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1', beta: 'auto' }, label: 'first',
      description: 'The first deployment', modelOverrides: { alpha: { model: 'builtin', temperature: 0.2, maxTokens: 512 } },
      settingsVersionId: 'settings-7', workflowVersionManifest: { onboarding: '3', billing: 2 },
    });
    assert.equal(body.success, true);
    assert.equal(body.replaced, null);
    const d = body.deployment;
    assert.deepEqual(Object.keys(d).sort(), FULL_KEYS);
    assert.match(d.id, CUID);
    assert.equal(d.projectId, server.projectId);
    assert.equal(d.environment, 'dev');
    assert.equal(d.status, 'active');
    assert.equal(d.label, 'first');
    assert.equal(d.description, 'The first deployment');
    assert.match(d.endpointSlug, new RegExp(`^${projectSlug}-dev-[0-9a-z]{8}$`));
    assert.equal(d.entryAgentName, 'alpha');
    assert.deepEqual(d.agentVersionManifest, { alpha: '1', beta: 'auto' });
    assert.deepEqual(d.modelOverrides, { alpha: { model: 'builtin', temperature: 0.2, maxTokens: 512 } });
    assert.equal(d.settingsVersionId, 'settings-7');
    assert.deepEqual(d.workflowVersionManifest, { onboarding: '3', billing: '2' });
    assert.equal(d.promotedFromId, null);
    assert.match(d.createdAt, ISO);
    assert.match(d.createdBy, /^apikey:c[0-9a-z]{24}$/);
    assert.equal(d.retiredAt, null);
    // Optional fields absent: null / empty, and a numeric version is stored as its string.
    const bare = await createDeployment(P, { environment: 'staging', entryAgentName: 'beta', agentVersionManifest: { beta: 2 } });
    assert.equal(bare.deployment.label, null);
    assert.equal(bare.deployment.description, null);
    assert.equal(bare.deployment.settingsVersionId, null);
    assert.deepEqual(bare.deployment.modelOverrides, {});
    assert.deepEqual(bare.deployment.workflowVersionManifest, {});
    assert.deepEqual(bare.deployment.agentVersionManifest, { beta: '2' });
  });

  test('list: the spec fields only, newest first, with pagination; ?environment filters', async () => {
    const project = await newProject('List project');
    await deployAgent(server, 'alpha', { projectId: project.id, source: answering('alpha', 'x') });
    const first = (await createDeployment(project.path, { environment: 'dev', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' }, label: 'one' })).deployment;
    const second = (await createDeployment(project.path, { environment: 'production', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } })).deployment;
    const res = await call(server.base, 'GET', `${project.path}/deployments`);
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.deepEqual(res.body.deployments.map((d: any) => d.id), [second.id, first.id]);
    assert.deepEqual(Object.keys(res.body.deployments[1]).sort(), ['createdAt', 'endpointSlug', 'environment', 'id', 'label', 'projectId', 'status']);
    assert.deepEqual(res.body.deployments[1], { id: first.id, projectId: project.id, environment: 'dev', status: 'active', label: 'one', endpointSlug: first.endpointSlug, createdAt: first.createdAt });
    assert.deepEqual(res.body.pagination, { total: 2, limit: 50, offset: 0, hasMore: false });
    const prod = await call(server.base, 'GET', `${project.path}/deployments?environment=production`);
    assert.deepEqual(prod.body.deployments.map((d: any) => d.id), [second.id]);
    assertError(await call(server.base, 'GET', `${project.path}/deployments?environment=qa`), 400, 'VALIDATION_ERROR', /environment/);
  });

  test('detail: the whole Deployment with channelCount 0', async () => {
    const created = (await createDeployment(P, { environment: 'dev', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' }, label: 'detail' })).deployment;
    const res = await call(server.base, 'GET', `${P}/deployments/${created.id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.deepEqual(Object.keys(res.body.deployment).sort(), [...FULL_KEYS, 'channelCount'].sort());
    assert.equal(res.body.deployment.channelCount, 0);
    assert.deepEqual({ ...res.body.deployment, channelCount: undefined }, { ...created, channelCount: undefined });
    assertError(await call(server.base, 'GET', `${P}/deployments/c000000000000000000000000`), 404, 'NOT_FOUND', /Deployment not found/);
    assertError(await call(server.base, 'GET', `${P}/deployments/not-an-id`), 404, 'NOT_FOUND', /Deployment not found/);
  });

  test('every deployment gets its own endpointSlug', async () => {
    const project = await newProject('Slugs');
    await deployAgent(server, 'alpha', { projectId: project.id, source: answering('alpha', 'x') });
    const slugs = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const d = (await createDeployment(project.path, { environment: 'dev', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } })).deployment;
      slugs.add(d.endpointSlug);
    }
    assert.equal(slugs.size, 6);
  });

  test('validation: 400 naming the field, the agent and the version', async () => {
    const base = { environment: 'dev', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } };
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ ...base, environment: 'qa' }, 'environment', /environment/],
      [{ entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } }, 'environment', /environment/],
      [{ environment: 'dev', agentVersionManifest: { alpha: '1' } }, 'entryAgentName', /entryAgentName/],
      [{ environment: 'dev', entryAgentName: 'alpha' }, 'agentVersionManifest', /agentVersionManifest/],
      [{ ...base, agentVersionManifest: {} }, 'agentVersionManifest', /at least one agent/],
      [{ ...base, agentVersionManifest: { alpha: '1', ghost: '1' } }, 'agentVersionManifest.ghost', /"ghost".*does not exist/],
      [{ ...base, agentVersionManifest: { alpha: '9' } }, 'agentVersionManifest.alpha', /"alpha" has no version 9/],
      [{ ...base, agentVersionManifest: { alpha: 'latest' } }, 'agentVersionManifest.alpha', /version number or 'auto'/],
      [{ ...base, agentVersionManifest: { alpha: '1', draft: 'auto' } }, 'agentVersionManifest.draft', /"draft" has no compiled version/],
      [{ ...base, agentVersionManifest: { alpha: '1', draft: '1' } }, 'agentVersionManifest.draft', /"draft" has no version 1/],
      [{ ...base, entryAgentName: 'beta' }, 'entryAgentName', /"beta" must also be listed/],
      [{ ...base, entryAgentName: 'nobody' }, 'entryAgentName', /"nobody" is not an agent/],
      [{ ...base, modelOverrides: { beta: { model: 'builtin' } } }, 'modelOverrides.beta', /"beta".*not in agentVersionManifest/],
      [{ ...base, modelOverrides: { alpha: { model: 'gpt-x' } } }, 'modelOverrides.alpha.model', /"gpt-x" is not available/],
      [{ ...base, modelOverrides: { alpha: { temperature: 7 } } }, 'modelOverrides.alpha.temperature', /temperature/],
      [{ ...base, surprise: true }, 'surprise', /Unknown field "surprise"/],
    ];
    for (const [body, field, message] of cases) {
      const res = await call(server.base, 'POST', `${P}/deployments`, { body });
      assertError(res, 400, 'VALIDATION_ERROR', message);
      assert.equal(res.body.error.details.field, field, JSON.stringify(res.body));
    }
    const pinned = await call(server.base, 'POST', `${P}/deployments`, { body: { ...base, agentVersionManifest: { alpha: '9' } } });
    assert.equal(pinned.body.error.details.agent, 'alpha');
    assert.equal(pinned.body.error.details.version, '9');
  });

  test('retire: status retired and retiredAt set; retiring twice is 409', async () => {
    const project = await newProject('Retire');
    await deployAgent(server, 'alpha', { projectId: project.id, source: answering('alpha', 'x') });
    const d = (await createDeployment(project.path, { environment: 'dev', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } })).deployment;
    const res = await call(server.base, 'POST', `${project.path}/deployments/${d.id}/retire`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body.deployment).sort(), ['id', 'retiredAt', 'status']);
    assert.equal(res.body.deployment.id, d.id);
    assert.equal(res.body.deployment.status, 'retired');
    assert.match(res.body.deployment.retiredAt, ISO);
    const detail = (await call(server.base, 'GET', `${project.path}/deployments/${d.id}`)).body.deployment;
    assert.equal(detail.status, 'retired');
    assert.equal(detail.retiredAt, res.body.deployment.retiredAt);
    assertError(await call(server.base, 'POST', `${project.path}/deployments/${d.id}/retire`), 409, 'CONFLICT', /already retired/);
    assertError(await call(server.base, 'POST', `${project.path}/deployments/${d.id}/retire`, { body: { now: true } }), 400, 'VALIDATION_ERROR', /takes no body/);
  });

  test('a retired deployment refuses new sessions (409) but its running sessions go on', async () => {
    const project = await newProject('Drain');
    await deployAgent(server, 'alpha', { projectId: project.id, source: answering('alpha', 'drain v1') });
    const d = (await createDeployment(project.path, { environment: 'production', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } })).deployment;
    const running = await chat(server, { deploymentId: d.id, message: 'hi' });
    assert.equal(running.response, 'drain v1');
    assert.equal((await call(server.base, 'POST', `${project.path}/deployments/${d.id}/retire`)).status, 200);

    for (const target of [{ deploymentId: d.id }, { endpointSlug: d.endpointSlug }]) {
      assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { ...target, message: 'hi' } }), 409, 'CONFLICT', /retired/);
      assertError(await call(server.base, 'POST', '/api/v1/chat/stream', { body: { ...target, message: 'hi' } }), 409, 'CONFLICT', /retired/);
    }
    // The session that was running continues (it is not idle), with or without naming the deployment.
    const next = await chat(server, { sessionId: running.sessionId, message: 'still there?' });
    assert.equal(next.sessionId, running.sessionId);
    assert.equal(next.response, 'drain v1');
    const named = await chat(server, { sessionId: running.sessionId, deploymentId: d.id, message: 'and now?' });
    assert.equal(named.response, 'drain v1');
    const session = (await call(server.base, 'GET', `${project.path}/sessions/${running.sessionId}`)).body.session;
    assert.equal(session.messageCount, 6);
    assert.equal(session.deploymentId, d.id);
  });

  test('drain rule: a session on a retired deployment may continue only while not idle', () => {
    const retired = { id: 'd1', status: 'retired', environment: 'dev', retiredAt: new Date().toISOString() } as Deployment;
    const now = Date.parse('2030-01-01T12:00:00.000Z');
    const idleMs = 30 * 60_000;
    admitContinuedSession(retired, '2030-01-01T11:45:00.000Z', now, idleMs);
    assert.throws(() => admitContinuedSession(retired, '2030-01-01T11:00:00.000Z', now, idleMs), (err: any) => err.code === 'CONFLICT' && /idle/.test(err.message));
    admitContinuedSession({ ...retired, status: 'active' }, '2020-01-01T00:00:00.000Z', now, idleMs);
  });

  test('rollback: a retired deployment becomes active again and retires the one active in its environment', async () => {
    const project = await newProject('Rollback');
    await deployAgent(server, 'alpha', { projectId: project.id, source: answering('alpha', 'rollback v1') });
    await recompile(project.id, 'alpha', answering('alpha', 'rollback v2'));
    const v1 = (await createDeployment(project.path, { environment: 'production', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } })).deployment;
    const created = await createDeployment(project.path, { environment: 'production', entryAgentName: 'alpha', agentVersionManifest: { alpha: '2' } });
    const v2 = created.deployment;
    // Creating in production retired v1.
    assert.equal(created.replaced.id, v1.id);
    assert.equal(created.replaced.status, 'retired');
    assert.match(created.replaced.retiredAt, ISO);
    assertError(await call(server.base, 'POST', `${project.path}/deployments/${v2.id}/rollback`), 409, 'CONFLICT', /only a retired deployment/);

    const res = await call(server.base, 'POST', `${project.path}/deployments/${v1.id}/rollback`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.deployment.id, v1.id);
    assert.equal(res.body.deployment.status, 'active');
    assert.equal(res.body.deployment.retiredAt, null);
    assert.equal(res.body.deployment.endpointSlug, v1.endpointSlug);
    assert.equal(res.body.replaced.id, v2.id);
    assert.equal(res.body.replaced.status, 'retired');
    assert.equal((await call(server.base, 'GET', `${project.path}/deployments/${v2.id}`)).body.deployment.status, 'retired');
    assert.equal((await chat(server, { deploymentId: v1.id, message: 'hi' })).response, 'rollback v1');
    const agent = (await call(server.base, 'GET', `${project.path}/agents/alpha`)).body.agent;
    assert.deepEqual(agent.activeVersions, { production: '1' });
  });

  test('promote: a copy in the target environment; the one active there is retired; the source stays', async () => {
    const project = await newProject('Promote');
    await deployAgent(server, 'alpha', { projectId: project.id, source: answering('alpha', 'promote v1') });
    await recompile(project.id, 'alpha', answering('alpha', 'promote v2'));
    const prod = (await createDeployment(project.path, { environment: 'production', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } })).deployment;
    const staging = (await createDeployment(project.path, {
      environment: 'staging', entryAgentName: 'alpha', agentVersionManifest: { alpha: '2' }, label: 'candidate', description: 'Next release',
      modelOverrides: { alpha: { maxTokens: 64 } }, settingsVersionId: 's-2', workflowVersionManifest: { intake: '4' },
    })).deployment;

    const res = await call(server.base, 'POST', `${project.path}/deployments/${staging.id}/promote`, { body: { targetEnvironment: 'production' } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const promoted = res.body.deployment;
    assert.match(promoted.id, CUID);
    assert.notEqual(promoted.id, staging.id);
    assert.notEqual(promoted.endpointSlug, staging.endpointSlug);
    assert.equal(promoted.environment, 'production');
    assert.equal(promoted.status, 'active');
    assert.equal(promoted.promotedFromId, staging.id);
    for (const field of ['entryAgentName', 'agentVersionManifest', 'modelOverrides', 'settingsVersionId', 'workflowVersionManifest', 'label', 'description']) {
      assert.deepEqual(promoted[field], staging[field], field);
    }
    assert.deepEqual(res.body.replaced, { id: prod.id, status: 'retired', retiredAt: res.body.replaced.retiredAt });
    assert.match(res.body.replaced.retiredAt, ISO);
    assert.equal((await call(server.base, 'GET', `${project.path}/deployments/${prod.id}`)).body.deployment.status, 'retired');
    assert.equal((await call(server.base, 'GET', `${project.path}/deployments/${staging.id}`)).body.deployment.status, 'active');
    assert.equal((await chat(server, { deploymentId: promoted.id, message: 'hi' })).response, 'promote v2');
    const agent = (await call(server.base, 'GET', `${project.path}/agents/alpha`)).body.agent;
    assert.deepEqual(agent.activeVersions, { staging: '2', production: '2' });

    // A label may be given; the same environment is refused; a body is required.
    const relabelled = await call(server.base, 'POST', `${project.path}/deployments/${staging.id}/promote`, { body: { targetEnvironment: 'dev', label: 'dev copy' } });
    assert.equal(relabelled.status, 201);
    assert.equal(relabelled.body.deployment.label, 'dev copy');
    assert.equal(relabelled.body.replaced, null);
    assertError(await call(server.base, 'POST', `${project.path}/deployments/${staging.id}/promote`, { body: { targetEnvironment: 'staging' } }), 400, 'VALIDATION_ERROR', /already in staging/);
    assertError(await call(server.base, 'POST', `${project.path}/deployments/${staging.id}/promote`, { body: { targetEnvironment: 'prod' } }), 400, 'VALIDATION_ERROR', /targetEnvironment/);
    assertError(await call(server.base, 'POST', `${project.path}/deployments/${staging.id}/promote`), 400, 'VALIDATION_ERROR', /targetEnvironment/);
  });

  test('chat on a deployment runs its pinned version; chat without one runs the latest', async () => {
    const project = await newProject('Pinned');
    await deployAgent(server, 'pinme', { projectId: project.id, source: answering('pinme', 'answer v1') });
    const d = (await createDeployment(project.path, { environment: 'dev', entryAgentName: 'pinme', agentVersionManifest: { pinme: '1' }, modelOverrides: { pinme: { temperature: 0.5 } } })).deployment;
    await recompile(project.id, 'pinme', answering('pinme', 'answer v2'));

    const byId = await chat(server, { deploymentId: d.id, message: 'hello' });
    assert.equal(byId.response, 'answer v1');
    assert.equal(byId.agentName, 'pinme');
    const bySlug = await chat(server, { endpointSlug: d.endpointSlug, message: 'hello' });
    assert.equal(bySlug.response, 'answer v1');
    const withProject = await chat(server, { projectId: project.id, deploymentId: d.id, message: 'hello' }, { endpoint: 'agent' });
    assert.equal(withProject.response, 'answer v1');
    const plain = await chat(server, { projectId: project.id, agentName: 'pinme', message: 'hello' });
    assert.equal(plain.response, 'answer v2');

    const session = (await call(server.base, 'GET', `${project.path}/sessions/${byId.sessionId}`)).body.session;
    assert.equal(session.deploymentId, d.id);
    assert.deepEqual(session.agentVersions, { pinme: 1 });
    assert.deepEqual(session.modelOverrides, { pinme: { temperature: 0.5 } });
    const plainSession = (await call(server.base, 'GET', `${project.path}/sessions/${plain.sessionId}`)).body.session;
    assert.equal(plainSession.deploymentId, null);
    assert.deepEqual(plainSession.agentVersions, { pinme: 2 });
  });

  test('chat targeting: mismatches are 404, both names at once is 400, agents outside the manifest are refused', async () => {
    const project = await newProject('Targeting');
    await deployAgent(server, 'alpha', { projectId: project.id, source: answering('alpha', 'alpha here') });
    await deployAgent(server, 'beta', { projectId: project.id, source: answering('beta', 'beta here') });
    const d = (await createDeployment(project.path, { environment: 'dev', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } })).deployment;
    const d2 = (await createDeployment(project.path, { environment: 'staging', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1', beta: '1' } })).deployment;
    assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { projectId: server.projectId, deploymentId: d.id, message: 'hi' } }), 404, 'NOT_FOUND', /Deployment not found/);
    assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { deploymentId: d.id, endpointSlug: d.endpointSlug, message: 'hi' } }), 400, 'VALIDATION_ERROR', /not both/);
    assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { deploymentId: 'c000000000000000000000000', message: 'hi' } }), 404, 'NOT_FOUND', /Deployment not found/);
    assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { endpointSlug: 'no-such-slug', message: 'hi' } }), 404, 'NOT_FOUND', /Deployment not found/);
    assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { deploymentId: d.id, agentName: 'beta', message: 'hi' } }), 400, 'VALIDATION_ERROR', /not part of deployment/);
    assertError(await call(server.base, 'POST', '/api/v1/chat/stream', { body: { deploymentId: d.id, agentName: 'beta', message: 'hi' } }), 400, 'VALIDATION_ERROR', /not part of deployment/);
    // agentName picks another manifest agent as the entry agent.
    assert.equal((await chat(server, { deploymentId: d2.id, agentName: 'beta', message: 'hi' })).response, 'beta here');
    // A session continues only on its own deployment.
    const s = await chat(server, { deploymentId: d.id, message: 'hi' });
    assertError(await call(server.base, 'POST', '/api/v1/chat/send', { body: { sessionId: s.sessionId, deploymentId: d2.id, message: 'hi' } }), 404, 'NOT_FOUND', /Session not found/);
  });

  test('a deployment session runs only its manifest: a handoff to an agent outside it is not followed', async () => {
    const project = await newProject('Manifest only');
    const front = 'AGENT: front\nMODEL: builtin\nFLOW: escalate\n  TRIGGER: pattern /human/i\n  HANDOFF: back REASON "asked"\nFALLBACK: "front here"';
    await deployAgent(server, 'back', { projectId: project.id, source: answering('back', 'back here') });
    await deployAgent(server, 'front', { projectId: project.id, source: front });
    const plain = await chat(server, { projectId: project.id, agentName: 'front', message: 'a human please' });
    assert.equal(plain.response, 'back here');
    const frontOnly = (await createDeployment(project.path, { environment: 'dev', entryAgentName: 'front', agentVersionManifest: { front: '1' } })).deployment;
    const refused = await chat(server, { deploymentId: frontOnly.id, message: 'a human please' });
    assert.equal(refused.response, 'front here');
    assert.equal(refused.agentName, 'front');
    const both = (await createDeployment(project.path, { environment: 'staging', entryAgentName: 'front', agentVersionManifest: { front: '1', back: 'auto' } })).deployment;
    const followed = await chat(server, { deploymentId: both.id, message: 'a human please' });
    assert.equal(followed.response, 'back here');
    assert.equal(followed.traceEvents[0]!.type, 'handoff');
  });

  test("'auto' pins the latest version when a session starts; the session keeps it", async () => {
    const project = await newProject('Auto');
    await deployAgent(server, 'autoa', { projectId: project.id, source: answering('autoa', 'auto v1') });
    const d = (await createDeployment(project.path, { environment: 'dev', entryAgentName: 'autoa', agentVersionManifest: { autoa: 'auto' } })).deployment;
    const first = await chat(server, { deploymentId: d.id, message: 'hi' });
    assert.equal(first.response, 'auto v1');
    assert.deepEqual((await call(server.base, 'GET', `${project.path}/agents/autoa`)).body.agent.activeVersions, { dev: '1' });

    await recompile(project.id, 'autoa', answering('autoa', 'auto v2'));
    const again = await chat(server, { sessionId: first.sessionId, message: 'hi again' });
    assert.equal(again.response, 'auto v1');
    const fresh = await chat(server, { deploymentId: d.id, message: 'hi' });
    assert.equal(fresh.response, 'auto v2');
    assert.deepEqual((await call(server.base, 'GET', `${project.path}/sessions/${first.sessionId}`)).body.session.agentVersions, { autoa: 1 });
    assert.deepEqual((await call(server.base, 'GET', `${project.path}/sessions/${fresh.sessionId}`)).body.session.agentVersions, { autoa: 2 });
    // activeVersions shows 'auto' resolved to the latest version now.
    const agents = (await call(server.base, 'GET', `${project.path}/agents`)).body.agents;
    assert.deepEqual(agents.find((a: any) => a.name === 'autoa').activeVersions, { dev: '2' });
  });

  test('permissions: a viewer key lists and reads (200) but cannot create, retire, roll back or promote (403)', async () => {
    const created = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'deployment viewer', role: 'viewer' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const viewer = created.body.key as string;
    const d = (await createDeployment(P, { environment: 'dev', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } })).deployment;
    const list = await call(server.base, 'GET', `${P}/deployments`, { key: viewer });
    assert.equal(list.status, 200);
    assert.ok(list.body.deployments.some((x: any) => x.id === d.id));
    const detail = await call(server.base, 'GET', `${P}/deployments/${d.id}`, { key: viewer });
    assert.equal(detail.status, 200);
    assert.equal(detail.body.deployment.id, d.id);
    assertError(await call(server.base, 'POST', `${P}/deployments`, { key: viewer, body: { environment: 'dev', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } } }), 403, 'FORBIDDEN', /deployment:create/);
    for (const action of ['retire', 'rollback']) {
      assertError(await call(server.base, 'POST', `${P}/deployments/${d.id}/${action}`, { key: viewer }), 403, 'FORBIDDEN', /deployment:create/);
    }
    assertError(await call(server.base, 'POST', `${P}/deployments/${d.id}/promote`, { key: viewer, body: { targetEnvironment: 'staging' } }), 403, 'FORBIDDEN', /deployment:create/);
    assert.equal((await call(server.base, 'GET', `${P}/deployments/${d.id}`)).body.deployment.status, 'active');
  });

  test("another tenant's deployment: 404 on every deployment route and in chat", async () => {
    const d = (await createDeployment(P, { environment: 'staging', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } })).deployment;
    const theirs = `/api/projects/${other.projectId}`;
    const routes: [string, string, unknown][] = [
      ['POST', `${P}/deployments`, { environment: 'dev', entryAgentName: 'alpha', agentVersionManifest: { alpha: '1' } }],
      ['GET', `${P}/deployments`, undefined],
      ['GET', `${P}/deployments/${d.id}`, undefined],
      ['POST', `${P}/deployments/${d.id}/retire`, undefined],
      ['POST', `${P}/deployments/${d.id}/rollback`, undefined],
      ['POST', `${P}/deployments/${d.id}/promote`, { targetEnvironment: 'production' }],
      // Their own project with our deployment id.
      ['GET', `${theirs}/deployments/${d.id}`, undefined],
      ['POST', `${theirs}/deployments/${d.id}/retire`, undefined],
      ['POST', `${theirs}/deployments/${d.id}/rollback`, undefined],
      ['POST', `${theirs}/deployments/${d.id}/promote`, { targetEnvironment: 'production' }],
    ];
    for (const [method, path, body] of routes) {
      const res = await call(server.base, method, path, { key: other.key, body });
      assertError(res, 404, 'NOT_FOUND', /not found/i);
    }
    assertError(await call(server.base, 'POST', '/api/v1/chat/send', { key: other.key, body: { deploymentId: d.id, message: 'hi' } }), 404, 'NOT_FOUND', /Deployment not found/);
    assertError(await call(server.base, 'POST', '/api/v1/chat/send', { key: other.key, body: { endpointSlug: d.endpointSlug, message: 'hi' } }), 404, 'NOT_FOUND', /Deployment not found/);
    const theirList = await call(server.base, 'GET', `${theirs}/deployments`, { key: other.key });
    assert.equal(theirList.status, 200);
    assert.deepEqual(theirList.body.deployments, []);
    // Nothing changed on our side.
    assert.equal((await call(server.base, 'GET', `${P}/deployments/${d.id}`)).body.deployment.status, 'active');
  });
});
