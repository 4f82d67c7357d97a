import assert from 'node:assert/strict';
import type { Route } from '../../gateway/router.js';
import { cuid } from '../../runtime/index.js';
import { EventIdGenerator, EventStore } from '../../actors/index.js';
import { ADMIN_KEY, call, chat, createTenant, deployAgent, startTestServer, type ApiResponse, type TestServer, type TestTenant } from '../integration/harness.js';

/** An encryption key so that tool secrets work on security test servers. */
const ENCRYPTION_KEYS = `k1:${Buffer.alloc(32, 7).toString('base64')}`;

/** A test server with the features every route area needs (encryption keys for tool secrets). */
export function startSecurityServer(env: Record<string, string> = {}): Promise<TestServer> {
  return startTestServer({ env: { PARLEY_ENCRYPTION_KEYS: ENCRYPTION_KEYS, PARLEY_TENANT_RPS: '100000', PARLEY_SESSION_MESSAGES_PER_MINUTE: '100000', ...env } });
}

/** A path parameter's value for tenant A's real resource, and a well-formed value that names nothing. */
export interface ParamValue {
  a: string;
  ghost: string;
}

/** The ids of one tenant's resources, one per path parameter name of the route table. */
export type TenantResources = Record<string, ParamValue>;

/** What a filler may use: the server and the tenant it creates in (A is the bootstrap tenant). */
interface FillContext {
  server: TestServer;
  key: string;
  projectId: string;
  /** Values filled so far (a deployment needs the agent first). */
  values: TenantResources;
}

const ghostId = (): string => cuid();
const AGENT = 'a_only';

/**
 * How to create tenant A's resource for each path parameter name. A route with a parameter not
 * listed here fails the suite: add a filler (and a plausible body below) with the new route.
 */
const FILLERS: Record<string, (ctx: FillContext) => Promise<ParamValue>> = {
  projectId: async (ctx) => ({ a: ctx.projectId, ghost: ghostId() }),
  agentName: async (ctx) => {
    await deployAgent(ctx.server, AGENT, { key: ctx.key, projectId: ctx.projectId, source: `AGENT: ${AGENT}\nFALLBACK: "A only"` });
    return { a: AGENT, ghost: 'no_such_agent' };
  },
  name: async (ctx) => ctx.values['agentName'] ?? (await FILLERS['agentName']!(ctx)),
  sessionId: async (ctx) => {
    if (!ctx.values['agentName']) ctx.values['agentName'] = await FILLERS['agentName']!(ctx);
    const { sessionId } = await chat(ctx.server, { projectId: ctx.projectId, agentName: AGENT, message: 'hello from A' }, { key: ctx.key });
    return { a: sessionId, ghost: ghostId() };
  },
  keyId: async (ctx) => {
    const res = await expectCreated(call(ctx.server.base, 'POST', '/api/api-keys', { key: ctx.key, body: { name: 'A second key', role: 'developer' } }), 'api key');
    return { a: res.body.apiKey.id, ghost: ghostId() };
  },
  contactId: async (ctx) => {
    const res = await expectCreated(call(ctx.server.base, 'POST', '/api/contacts', { key: ctx.key, body: { displayName: 'A contact', identity: 'a-contact@example.com', identityType: 'email' } }), 'contact');
    return { a: res.body.data.id, ghost: ghostId() };
  },
  deploymentId: async (ctx) => {
    if (!ctx.values['agentName']) ctx.values['agentName'] = await FILLERS['agentName']!(ctx);
    const res = await expectCreated(
      call(ctx.server.base, 'POST', `/api/projects/${ctx.projectId}/deployments`, { key: ctx.key, body: { environment: 'dev', entryAgentName: AGENT, agentVersionManifest: { [AGENT]: 1 } } }),
      'deployment',
    );
    return { a: res.body.deployment.id, ghost: ghostId() };
  },
  secretId: async (ctx) => {
    const res = await expectCreated(
      call(ctx.server.base, 'POST', '/api/tool-secrets', { key: ctx.key, body: { projectId: ctx.projectId, toolName: 'a_tool', secretKey: 'API_TOKEN', value: 'a-secret-value' } }),
      'tool secret',
    );
    return { a: res.body.secret.id, ghost: ghostId() };
  },
  spanId: async (ctx) => {
    // A turn span of A's session, written straight to the event store (what the session records per turn).
    if (!ctx.values['sessionId']) ctx.values['sessionId'] = await FILLERS['sessionId']!(ctx);
    const sessionId = ctx.values['sessionId'].a;
    const owner = ctx.server.parley.deps.sessions.owner(sessionId)!;
    const spanId = `span-${cuid()}`;
    const now = Date.now();
    await new EventStore(ctx.server.parley.deps.analytics, { retentionDays: ctx.server.config.analyticsRetentionDays }).write([{
      id: new EventIdGenerator().next(now), tenantId: owner.tenantId, projectId: owner.projectId, category: 'message', event_type: 'turn', agent_name: AGENT,
      session_id: sessionId, channel: 'api', timestamp: new Date(now).toISOString(), duration_ms: 1, error: null, span_id: spanId, parent_span_id: null, metadata: {},
    }]);
    return { a: spanId, ghost: `span-${ghostId()}` };
  },
};

async function expectCreated(pending: Promise<ApiResponse>, what: string): Promise<ApiResponse> {
  const res = await pending;
  assert.equal(res.status, 201, `creating A's ${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

/** Path parameter names of a route, in order. */
export function paramsOf(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

/** Creates, in the tenant of `key`, one resource for every path parameter the routes use. */
export async function createResources(server: TestServer, routes: readonly Route[], key = ADMIN_KEY, projectId = server.projectId): Promise<TenantResources> {
  const needed = new Set(routes.flatMap((r) => paramsOf(r.path)));
  const unknown = [...needed].filter((p) => !(p in FILLERS));
  assert.deepEqual(unknown, [], `test/security/fixture.ts cannot fill the path parameter(s) ${unknown.map((p) => `{${p}}`).join(', ')} used by ${routes.filter((r) => paramsOf(r.path).some((p) => unknown.includes(p))).map((r) => `${r.method} ${r.path}`).join(', ')}: add a filler to FILLERS`);
  const values: TenantResources = {};
  const ctx: FillContext = { server, key, projectId, values };
  // projectId and agentName first: other resources hang off them.
  for (const name of ['projectId', 'agentName', ...[...needed].sort()]) {
    if (!needed.has(name) || values[name]) continue;
    values[name] = await FILLERS[name]!(ctx);
  }
  return values;
}

/** Fills a route path with `values[param][side]`, URI-encoded; `overrides` win. */
export function fillPath(path: string, values: TenantResources, side: keyof ParamValue, overrides: Record<string, string> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(overrides[p] ?? values[p]![side]));
}

/**
 * A valid body for each route that takes one, so that a test reaches the route's lookups and
 * writes instead of stopping at validation. `n` makes names unique across calls; ids in the body
 * are A's (`side` 'a') or ones that name nothing ('ghost').
 */
export function plausibleBody(route: Route, values: TenantResources, n: number, side: keyof ParamValue = 'a'): Record<string, unknown> | undefined {
  const id = (p: string): string => values[p]?.[side] ?? 'unfilled';
  const bodies: Record<string, () => Record<string, unknown>> = {
    'POST /api/projects': () => ({ name: `Project ${n}`, slug: `project-${n}` }),
    'PATCH /api/projects/{projectId}': () => ({ name: `Renamed ${n}` }),
    'POST /api/api-keys': () => ({ name: `key ${n}`, role: 'viewer' }),
    'POST /api/users': () => ({ email: `user${n}@example.com`, password: 'a long enough password', role: 'viewer' }),
    'POST /api/projects/{projectId}/agents': () => ({ name: `agent_${n}`, dslContent: `AGENT: agent_${n}\nFALLBACK: "x"` }),
    'PUT /api/projects/{projectId}/agents/{agentName}/dsl': () => ({ dslContent: `AGENT: ${AGENT}\nFALLBACK: "A only"` }),
    'POST /api/v1/chat/send': () => ({ projectId: id('projectId'), agentName: AGENT, message: 'hi' }),
    'POST /api/v1/chat/agent': () => ({ projectId: id('projectId'), agentName: AGENT, message: 'hi' }),
    'POST /api/v1/chat/stream': () => ({ projectId: id('projectId'), agentName: AGENT, message: 'hi' }),
    'POST /api/contacts': () => ({ displayName: `Contact ${n}` }),
    'PUT /api/contacts/{contactId}': () => ({ displayName: `Contact ${n}` }),
    'POST /api/contacts/{contactId}/link-session': () => ({ sessionId: id('sessionId') }),
    'POST /api/projects/{projectId}/deployments': () => ({ environment: 'dev', entryAgentName: AGENT, agentVersionManifest: { [AGENT]: 1 } }),
    'POST /api/projects/{projectId}/deployments/{deploymentId}/promote': () => ({ targetEnvironment: 'staging' }),
    'POST /api/tool-secrets': () => ({ projectId: id('projectId'), toolName: `tool_${n}`, secretKey: 'KEY', value: 'v' }),
    'PUT /api/tool-secrets/{secretId}': () => ({ value: `rotated ${n}` }),
    'POST /api/projects/{projectId}/import': () => ({}),
    'PUT /api/projects/{projectId}/model-settings': () => ({ providers: { main: { kind: 'openai', defaultModel: `model-${n}` } } }),
    'POST /api/projects/{projectId}/analytics/events': () => ({ events: [{ category: 'system', event_type: `probe_${n}` }] }),
    'POST /api/projects/{projectId}/analytics/query': () => ({ timeRange: { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString() } }),
    'POST /api/projects/{projectId}/analytics/aggregate': () => ({ timeRange: { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString() }, groupBy: ['category'], metrics: ['count'] }),
    'POST /api/admin/tenants': () => ({ name: `Tenant ${n}` }),
    'PUT /api/admin/tenants/{tenantId}/limits': () => ({ requestsPerSecond: 100000 }),
  };
  return bodies[`${route.method} ${route.path}`]?.();
}

/** Starts a server with tenant A (bootstrap, every resource made) and tenant B (its own project only). */
export async function twoTenants(): Promise<{ server: TestServer; A: TenantResources; B: TestTenant; routes: readonly Route[] }> {
  const server = await startSecurityServer();
  const routes = server.parley.app.router.routes().filter((r) => r.auth === 'principal');
  const A = await createResources(server, routes);
  const B = await createTenant(server, 'Tenant B');
  return { server, A, B, routes };
}
