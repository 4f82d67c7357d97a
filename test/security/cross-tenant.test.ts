import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Route } from '../../gateway/router.js';
import { ADMIN_KEY, assertError, call, type ApiResponse, type TestServer, type TestTenant } from '../integration/harness.js';
import { fillPath, paramsOf, plausibleBody, twoTenants, type TenantResources } from './fixture.js';

/** Keys whose values change on every read (timestamps of exports and the like), left out of snapshots. */
const VOLATILE_KEY = /At$|^requestId$/;

function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !VOLATILE_KEY.test(k)).map(([k, v]) => [k, stable(v)]));
  }
  return value;
}

/**
 * Tenant A (the bootstrap tenant) owns one resource of every kind the route table names; tenant B
 * walks every authenticated route with A's ids. Each answer must be exactly the answer for an id
 * that does not exist, B's lists must never show A's ids, and A's data must be unchanged after.
 */
describe('security: cross-tenant walk over every authenticated route', () => {
  let server: TestServer;
  let A: TenantResources;
  let B: TestTenant;
  let routes: readonly Route[];
  let snapshot: Map<string, unknown>;

  /** A's view of every GET route it can fill, without volatile fields. */
  async function snapshotOfA(): Promise<Map<string, unknown>> {
    const views = new Map<string, unknown>();
    for (const route of routes.filter((r) => r.method === 'GET')) {
      const path = fillPath(route.path, A, 'a');
      const res = await call(server.base, 'GET', path);
      views.set(path, { status: res.status, body: stable(res.body) });
    }
    return views;
  }

  /** Waits until A's analytics stop changing: A's chat turn records them on a worker, flushed in the background. */
  async function analyticsSettled(): Promise<void> {
    const total = async (): Promise<number> => (await call(server.base, 'GET', `/api/projects/${A['projectId']!.a}/analytics/events?limit=1`)).body.data.total as number;
    let last = -1;
    for (let i = 0; i < 50; i++) {
      const now = await total();
      // Unchanged across three recorder flush intervals (100 ms each): nothing is in flight.
      if (now === last && now > 0) return;
      last = now;
      await new Promise((r) => setTimeout(r, 300));
    }
    throw new Error("A's analytics never settled");
  }

  before(async () => {
    ({ server, A, B, routes } = await twoTenants());
    await analyticsSettled();
    snapshot = await snapshotOfA();
  });
  after(async () => {
    await server.close();
  });

  const asB = (method: string, path: string, body?: unknown): Promise<ApiResponse> => call(server.base, method, path, { key: B.key, body });
  const aIds = (): string[] => Object.values(A).map((v) => v.a).filter((v) => v.length >= 20);

  function assertSameAsMissing(foreign: ApiResponse, missing: ApiResponse, what: string): void {
    assert.equal(foreign.status, missing.status, `${what}: foreign ${foreign.status} ${JSON.stringify(foreign.body)} vs missing ${missing.status} ${JSON.stringify(missing.body)}`);
    assert.equal(foreign.body?.error?.code, missing.body?.error?.code, `${what}: codes differ`);
    assert.equal(foreign.body?.error?.message, missing.body?.error?.message, `${what}: messages differ`);
    assert.deepEqual(foreign.body?.error?.details, missing.body?.error?.details, `${what}: details differ`);
    for (const id of aIds()) assert.equal(JSON.stringify(foreign.body).includes(id), false, `${what}: the answer names A's id ${id}`);
  }

  test('the walk covers the route table', () => {
    const withParams = routes.filter((r) => paramsOf(r.path).length > 0);
    assert.ok(routes.length >= 20, `only ${routes.length} authenticated routes`);
    assert.ok(withParams.some((r) => r.path === '/api/api-keys/{keyId}'));
    assert.ok(withParams.some((r) => r.path === '/api/agents/{name}'));
    for (const route of withParams) for (const p of paramsOf(route.path)) assert.ok(A[p], `no value of A for {${p}}`);
  });

  test("every route with path parameters answers B for A's ids exactly as for ids that do not exist (404)", async () => {
    let n = 0;
    let checked = 0;
    for (const route of routes.filter((r) => paramsOf(r.path).length > 0)) {
      const id = `${route.method} ${route.path}`;
      const takesBody = route.method !== 'GET' && route.method !== 'DELETE' && route.body !== 'none';
      const variants: ('none' | 'empty' | 'plausible')[] = takesBody ? ['none', 'empty', 'plausible'] : ['none'];
      // B's own project with A's other ids must be a miss too.
      const projectOverrides: Record<string, string>[] = route.path.includes('{projectId}') && paramsOf(route.path).length > 1 ? [{}, { projectId: B.projectId }] : [{}];
      let saw404 = false;
      for (const variant of variants) {
        for (const overrides of projectOverrides) {
          n++;
          const body = (side: 'a' | 'ghost'): unknown => (variant === 'none' ? undefined : variant === 'empty' ? {} : plausibleBody(route, A, n, side) ?? {});
          const foreign = await asB(route.method, fillPath(route.path, A, 'a', overrides), body('a'));
          const missing = await asB(route.method, fillPath(route.path, A, 'ghost', overrides), body('ghost'));
          const what = `${id} (${variant} body${overrides['projectId'] ? ", B's project" : ''})`;
          assertSameAsMissing(foreign, missing, what);
          if (foreign.status === 404) {
            assertError(foreign, 404, 'NOT_FOUND');
            saw404 = true;
          }
          checked++;
        }
      }
      assert.ok(saw404, `${id}: no probe reached the lookup (never 404): add a plausible body for it in test/security/fixture.ts`);
    }
    assert.ok(checked >= 30, `only ${checked} probes`);
  });

  test("routes without path parameters: bodies naming A's ids answer like ids that do not exist", async () => {
    let n = 1000;
    for (const route of routes.filter((r) => paramsOf(r.path).length === 0 && r.method !== 'GET')) {
      const foreignBody = plausibleBody(route, A, ++n, 'a');
      const ghostBody = plausibleBody(route, A, ++n, 'ghost');
      if (!foreignBody || JSON.stringify(foreignBody).replace(/\d+/g, '') === JSON.stringify(ghostBody).replace(/\d+/g, '')) continue;
      const foreign = await asB(route.method, route.path, foreignBody);
      const missing = await asB(route.method, route.path, ghostBody);
      assertSameAsMissing(foreign, missing, `${route.method} ${route.path}`);
      assertError(foreign, 404, 'NOT_FOUND');
    }
  });

  test("B's lists and reads without path parameters never show A's ids, also when asked by query", async () => {
    for (const route of routes.filter((r) => paramsOf(r.path).length === 0 && r.method === 'GET')) {
      for (const query of ['', `?projectId=${encodeURIComponent(A['projectId']!.a)}`]) {
        const res = await asB('GET', route.path + query);
        assert.ok(res.status < 500, `${route.path}${query}: ${res.status}`);
        const text = JSON.stringify(res.body);
        for (const id of aIds()) assert.equal(text.includes(id), false, `GET ${route.path}${query} as B shows A's id ${id}: ${text.slice(0, 300)}`);
      }
    }
  });

  test("after the walk, every one of A's reads answers exactly as before, and A's key still works", async () => {
    const now = await snapshotOfA();
    assert.equal(now.size, snapshot.size);
    for (const [path, before] of snapshot) assert.deepEqual(now.get(path), before, `A's ${path} changed during B's walk`);
    const projects = await call(server.base, 'GET', '/api/projects', { key: ADMIN_KEY });
    assert.equal(projects.status, 200);
    assert.ok(projects.body.projects.some((p: { id: string }) => p.id === A['projectId']!.a));
  });
});
