import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileAgent } from '../../actors/language/index.js';
import { ADMIN_KEY, ADMIN_TOKEN, assertError, call, createTenant, deployAgent, rawRequest, startTestServer, type ApiResponse, type TestServer } from './harness.js';
import { programEdges, programTools, readZip, writeZip } from '../../actors/project-io/internal.js';

const sha256 = (x: string | Buffer): string => createHash('sha256').update(x).digest('hex');

const FRONT = `AGENT: front
MODEL: builtin
HANDOFF: helper WHEN intent == help
HANDOFF: ghost WHEN intent == haunt
FALLBACK: "Hi from front"
`;
const HELPER = `AGENT: helper
MODEL: builtin
FALLBACK: "Helping"
`;
// Written here rather than taken from examples/ so that edits to the examples do not move these tests.
const CONCIERGE = `# Concierge: routes questions.
AGENT: concierge
DESCRIPTION: Routes questions
MODEL: builtin
FLOW: check
  TRIGGER: pattern /refund/i
  HANDOFF: fraud_check REASON "check it"
HANDOFF: human_desk WHEN intent == speak_to_human
FALLBACK: "How can I help?"
`;
const DRAFT = `AGENT: draft
MODEL: builtin
FALLBACK: "Not compiled yet"
`;

describe('project export and import', () => {
  let server: TestServer;
  /** A clean project (billing example + an uncompiled draft) that imports back. */
  let clean: string;
  /** A project with a dangling handoff and an agent without content. */
  let messy: string;

  const io = (projectId: string): string => `/api/projects/${projectId}/project-io`;
  const newProject = async (name: string): Promise<string> => {
    const res = await call(server.base, 'POST', '/api/projects', { body: { name } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.project.id as string;
  };
  const agentsOf = async (projectId: string): Promise<Map<string, { dslContent: string; description: string | null; versionCount: number }>> => {
    const list = await call(server.base, 'GET', `/api/projects/${projectId}/agents`);
    assert.equal(list.status, 200);
    const out = new Map<string, { dslContent: string; description: string | null; versionCount: number }>();
    for (const a of list.body.agents as { name: string }[]) {
      const one = await call(server.base, 'GET', `/api/projects/${projectId}/agents/${a.name}`);
      out.set(a.name, { dslContent: one.body.agent.dslContent, description: one.body.agent.description, versionCount: one.body.agent.versionCount });
    }
    return out;
  };
  const importJson = (projectId: string, body: unknown, query = '', key?: string): Promise<ApiResponse> =>
    call(server.base, 'POST', `${io(projectId)}/import${query}`, { body, key });
  const importZip = async (projectId: string, zip: Buffer, query = ''): Promise<ApiResponse> => {
    const res = await fetch(`${server.base}${io(projectId)}/import${query}`, {
      method: 'POST', body: zip, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/zip' },
    });
    return { status: res.status, headers: res.headers, body: await res.json() };
  };
  const exportFolder = async (projectId: string): Promise<any> => {
    const res = await call(server.base, 'GET', `${io(projectId)}/export`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  before(async () => {
    server = await startTestServer({ env: { PARLEY_ADMIN_TOKEN: ADMIN_TOKEN } });
    clean = server.projectId;
    // Agents must exist before an agent naming them compiles.
    for (const name of ['fraud_check', 'human_desk']) await deployAgent(server, name);
    await deployAgent(server, 'concierge', { source: CONCIERGE });
    const draft = await call(server.base, 'POST', `/api/projects/${clean}/agents`, { body: { name: 'draft', dslContent: DRAFT, description: 'A draft' } });
    assert.equal(draft.status, 201);

    messy = await newProject('Messy');
    await deployAgent(server, 'helper', { source: HELPER, projectId: messy });
    // front names an agent that does not exist, so it cannot compile: the preview reads its working copy.
    const front = await call(server.base, 'POST', `/api/projects/${messy}/agents`, { body: { name: 'front', dslContent: FRONT } });
    assert.equal(front.status, 201);
    const blank = await call(server.base, 'POST', `/api/projects/${messy}/agents`, { body: { name: 'blank', dslContent: '   \n' } });
    assert.equal(blank.status, 201);
  });
  after(async () => {
    await server.close();
  });

  test('preview: agents, handoff edges and a dangling reference error', async () => {
    const res = await call(server.base, 'GET', `${io(messy)}/export/preview`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    assert.deepEqual(res.body.project, { name: 'Messy', slug: 'messy' });
    assert.deepEqual(res.body.agents, [
      { name: 'blank', hasDslContent: false },
      { name: 'front', hasDslContent: true },
      { name: 'helper', hasDslContent: true },
    ]);
    assert.deepEqual(res.body.tools, []);
    assert.deepEqual(res.body.dependencies.edges, [
      { from: 'front', to: 'ghost', type: 'handoff' },
      { from: 'front', to: 'helper', type: 'handoff' },
    ]);
    const { valid, errors } = res.body.dependencies.validation;
    assert.equal(valid, false);
    const dangling = errors.filter((e: { code: string }) => e.code === 'DANGLING_REFERENCE');
    assert.equal(dangling.length, 1);
    assert.equal(dangling[0].agent, 'front');
    assert.equal(dangling[0].target, 'ghost');
    assert.match(dangling[0].message, /ghost/);
    // The blank agent has no version and no compilable working copy: reported too.
    assert.ok(errors.some((e: { code: string; agent: string }) => e.code === 'COMPILE_ERROR' && e.agent === 'blank'));
  });

  test('preview of a clean project is valid; flow and top-level handoffs are edges', async () => {
    const res = await call(server.base, 'GET', `${io(clean)}/export/preview`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.dependencies.validation, { valid: true, errors: [] });
    assert.deepEqual(res.body.dependencies.edges, [
      { from: 'concierge', to: 'fraud_check', type: 'handoff' },
      { from: 'concierge', to: 'human_desk', type: 'handoff' },
    ]);
  });

  test('export folder: manifest checksums match the files, lockfile pins versions, warnings name the problems', async () => {
    const body = await exportFolder(messy);
    assert.equal(body.success, true);
    assert.equal(body.manifest.formatVersion, 1);
    assert.deepEqual(body.manifest.project, { name: 'Messy', slug: 'messy' });
    assert.ok(!Number.isNaN(Date.parse(body.manifest.exportedAt)));
    const paths = Object.keys(body.files).sort();
    assert.deepEqual(paths, ['agents/blank.agent', 'agents/front.agent', 'agents/helper.agent', 'parley.json']);
    assert.deepEqual(body.manifest.files.map((f: { path: string }) => f.path), paths);
    for (const f of body.manifest.files) {
      assert.equal(f.sha256, sha256(body.files[f.path]), f.path);
      assert.equal(f.bytes, Buffer.byteLength(body.files[f.path]), f.path);
    }
    assert.equal(body.files['agents/front.agent'], FRONT);
    assert.deepEqual(body.lockfile.agents, {
      blank: { version: null, sha256: null },
      front: { version: null, sha256: null },
      helper: { version: 1, sha256: sha256(HELPER) },
    });
    const codes = (agent: string): string[] => body.warnings.filter((w: { agent?: string }) => w.agent === agent).map((w: { code: string }) => w.code).sort();
    assert.deepEqual(codes('blank'), ['NOT_COMPILED', 'NO_DSL_CONTENT']);
    assert.deepEqual(codes('front'), ['DANGLING_REFERENCE', 'NOT_COMPILED']);
    assert.deepEqual(codes('helper'), []);
    for (const w of body.warnings) assert.equal(typeof w.message, 'string');
  });

  test('export warns about an uncompiled draft and about changes not compiled into a version', async () => {
    await call(server.base, 'PUT', `/api/projects/${messy}/agents/helper/dsl`, { body: { dslContent: HELPER.replace('Helping', 'Helping more') } });
    try {
      const body = await exportFolder(messy);
      assert.ok(body.warnings.some((w: { code: string; agent?: string }) => w.code === 'UNCOMPILED_CHANGES' && w.agent === 'helper'));
      // The lockfile still pins the compiled version and its source checksum.
      assert.deepEqual(body.lockfile.agents.helper, { version: 1, sha256: sha256(HELPER) });
      const cleanExport = await exportFolder(clean);
      assert.ok(cleanExport.warnings.some((w: { code: string; agent?: string }) => w.code === 'NOT_COMPILED' && w.agent === 'draft'));
    } finally {
      await call(server.base, 'PUT', `/api/projects/${messy}/agents/helper/dsl`, { body: { dslContent: HELPER } });
    }
  });

  test('include_deployments=true adds deployment records; bad query values are 400', async () => {
    const dep = await call(server.base, 'POST', `/api/projects/${clean}/deployments`, {
      body: { environment: 'dev', agentVersionManifest: { concierge: '1' }, entryAgentName: 'concierge' },
    });
    const res = await call(server.base, 'GET', `${io(clean)}/export?include_deployments=true`);
    assert.equal(res.status, 200);
    assert.equal(dep.status, 201, JSON.stringify(dep.body));
    const path = `deployments/${dep.body.deployment.id}.json`;
    assert.ok(res.body.files[path], `expected ${path} in ${Object.keys(res.body.files).join(', ')}`);
    const record = JSON.parse(res.body.files[path]);
    assert.equal(record.entryAgentName, 'concierge');
    assert.equal(record.tenantId, undefined, 'records are written in their public form');
    assert.ok(res.body.manifest.files.some((f: { path: string }) => f.path === path));
    // Importing an archive with deployments verifies them but does not import them.
    const target = await newProject('With deployments');
    const imported = await importJson(target, { manifest: res.body.manifest, lockfile: res.body.lockfile, files: res.body.files });
    assert.equal(imported.status, 200, JSON.stringify(imported.body));
    assert.ok(imported.body.warnings.some((w: { code: string; file?: string }) => w.code === 'DEPLOYMENTS_NOT_IMPORTED' && w.file === path));
    const without = await exportFolder(clean);
    assert.equal(Object.keys(without.files).some((p) => p.startsWith('deployments/')), false);
    assertError(await call(server.base, 'GET', `${io(clean)}/export?format=tar`), 400, 'VALIDATION_ERROR', /format/);
    assertError(await call(server.base, 'GET', `${io(clean)}/export?include_deployments=yes`), 400, 'VALIDATION_ERROR', /include_deployments/);
  });

  test('export zip is a valid archive holding the folder form', async () => {
    const res = await call(server.base, 'GET', `${io(clean)}/export?format=zip`);
    assert.equal(res.status, 200);
    const { archive } = res.body;
    assert.equal(archive.contentType, 'application/zip');
    assert.match(archive.fileName, /^default.*\.zip$|\.zip$/);
    const zip = Buffer.from(archive.base64, 'base64');
    assert.equal(zip.length, archive.bytes);
    assert.equal(sha256(zip), archive.sha256);
    const entries = new Map(readZip(zip).map((e) => [e.path, e.data.toString('utf8')]));
    assert.deepEqual(JSON.parse(entries.get('manifest.json')!), res.body.manifest);
    assert.deepEqual(JSON.parse(entries.get('parley.lock.json')!), res.body.lockfile);
    for (const [path, content] of Object.entries(res.body.files)) assert.equal(entries.get(path), content, path);
    assert.equal(entries.size, Object.keys(res.body.files).length + 2);

    const unzipAvailable = spawnSync('unzip', ['-v']).status === 0;
    if (!unzipAvailable) {
      console.log('# unzip is not installed: the cross-check of the export with unzip is skipped');
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'parley-export-'));
    try {
      writeFileSync(join(dir, 'export.zip'), zip);
      execFileSync('unzip', ['-qt', join(dir, 'export.zip')]);
      const listed = execFileSync('unzip', ['-Z1', join(dir, 'export.zip')], { encoding: 'utf8' }).trim().split('\n').sort();
      assert.deepEqual(listed, [...entries.keys()].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('round trip: export A (folder), import into B: agents identical; again: all unchanged', async () => {
    const exported = await exportFolder(clean);
    const target = await newProject('Copy');
    // The export reply is posted back as it is (its success and warnings fields are ignored).
    const res = await importJson(target, exported);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    assert.equal(res.body.dryRun, false);
    assert.deepEqual(res.body.created.sort(), ['concierge', 'draft', 'fraud_check', 'human_desk']);
    assert.deepEqual(res.body.updated, []);
    assert.deepEqual(res.body.unchanged, []);
    // Compiled agents get a version; the draft (never compiled in A) does not.
    assert.deepEqual(res.body.versions.map((v: { agent: string }) => v.agent).sort(), ['concierge', 'fraud_check', 'human_desk']);

    const a = await agentsOf(clean);
    const b = await agentsOf(target);
    assert.deepEqual([...b.keys()], [...a.keys()]);
    for (const [name, agent] of a) {
      assert.equal(b.get(name)!.dslContent, agent.dslContent, name);
      assert.equal(b.get(name)!.description, agent.description, name);
      assert.equal(b.get(name)!.versionCount, agent.versionCount > 0 ? 1 : 0, name);
    }
    const versions = await call(server.base, 'GET', `/api/projects/${target}/agents/concierge/versions`);
    assert.equal(versions.body.versions[0].dslContent, a.get('concierge')!.dslContent);

    const again = await importJson(target, { manifest: exported.manifest, lockfile: exported.lockfile, files: exported.files });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.created, []);
    assert.deepEqual(again.body.unchanged.sort(), ['concierge', 'draft', 'fraud_check', 'human_desk']);
    assert.deepEqual(again.body.versions, []);
  });

  test('round trip through the zip form, with dryRun first', async () => {
    const res = await call(server.base, 'GET', `${io(clean)}/export?format=zip`);
    const zip = Buffer.from(res.body.archive.base64, 'base64');
    const target = await newProject('Zip copy');
    const dry = await importZip(target, zip, '?dryRun=true');
    assert.equal(dry.status, 200, JSON.stringify(dry.body));
    assert.equal(dry.body.dryRun, true);
    assert.equal(dry.body.created.length, 4);
    assert.equal((await agentsOf(target)).size, 0, 'a dry run writes nothing');

    const real = await importZip(target, zip);
    assert.equal(real.status, 200, JSON.stringify(real.body));
    assert.equal(real.body.created.length, 4);
    const b = await agentsOf(target);
    for (const [name, agent] of await agentsOf(clean)) assert.equal(b.get(name)?.dslContent, agent.dslContent, name);
  });

  test('merge updates changed agents and leaves others alone', async () => {
    const target = await newProject('Merge');
    await deployAgent(server, 'fraud_check', { projectId: target, source: 'AGENT: fraud_check\nMODEL: builtin\nFALLBACK: "old"\n' });
    await deployAgent(server, 'bystander', { projectId: target, source: 'AGENT: bystander\nMODEL: builtin\nFALLBACK: "stay"\n' });
    const exported = await exportFolder(clean);
    const res = await importJson(target, { manifest: exported.manifest, lockfile: exported.lockfile, files: exported.files });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.updated, ['fraud_check']);
    assert.ok(res.body.versions.some((v: { agent: string; version: number }) => v.agent === 'fraud_check' && v.version === 2));
    const agents = await agentsOf(target);
    assert.equal(agents.get('bystander')!.dslContent, 'AGENT: bystander\nMODEL: builtin\nFALLBACK: "stay"\n');
    assert.equal(agents.get('fraud_check')!.versionCount, 2);
  });

  test('a tampered file is refused with 400 naming it, and nothing changes', async () => {
    const exported = await exportFolder(clean);
    const target = await newProject('Tampered');
    const files = { ...exported.files, 'agents/human_desk.agent': exported.files['agents/human_desk.agent'].replace('person', 'robot') };
    const res = await importJson(target, { manifest: exported.manifest, lockfile: exported.lockfile, files });
    assertError(res, 400, 'BAD_REQUEST', /agents\/human_desk\.agent/);
    assert.equal(res.body.error.details.file, 'agents/human_desk.agent');
    assert.equal((await agentsOf(target)).size, 0);

    const missing = { ...exported.files };
    delete missing['agents/draft.agent'];
    assertError(await importJson(target, { manifest: exported.manifest, lockfile: exported.lockfile, files: missing }), 400, 'BAD_REQUEST', /agents\/draft\.agent/);
    const extra = { ...exported.files, 'agents/sneaky.agent': 'AGENT: sneaky\nMODEL: builtin\nFALLBACK: "x"\n' };
    assertError(await importJson(target, { manifest: exported.manifest, lockfile: exported.lockfile, files: extra }), 400, 'BAD_REQUEST', /not listed in the manifest/);
    assert.equal((await agentsOf(target)).size, 0);
  });

  test('a compile error is refused with 400 naming file, line and column; earlier agents are not written', async () => {
    const exported = await exportFolder(clean);
    const target = await newProject('Broken');
    const broken = 'AGENT: human_desk\nMODEL: builtin\nFLOW: x\n  RESPOND "missing colon"\n';
    const files = { ...exported.files, 'agents/human_desk.agent': broken };
    const manifest = { ...exported.manifest, files: exported.manifest.files.map((f: { path: string }) => (f.path === 'agents/human_desk.agent' ? { path: f.path, sha256: sha256(broken), bytes: Buffer.byteLength(broken) } : f)) };
    const res = await importJson(target, { manifest, lockfile: exported.lockfile, files });
    assertError(res, 400, 'VALIDATION_ERROR', /agents\/human_desk\.agent: line \d+, column \d+/);
    assert.equal(res.body.error.details.file, 'agents/human_desk.agent');
    assert.equal(typeof res.body.error.details.line, 'number');
    assert.equal(typeof res.body.error.details.column, 'number');
    // concierge and fraud_check sort before human_desk and compiled fine: still nothing written.
    assert.equal((await agentsOf(target)).size, 0);

    const renamed = 'AGENT: someone_else\nMODEL: builtin\nFALLBACK: "x"\n';
    const files2 = { ...exported.files, 'agents/human_desk.agent': renamed };
    const manifest2 = { ...exported.manifest, files: exported.manifest.files.map((f: { path: string }) => (f.path === 'agents/human_desk.agent' ? { path: f.path, sha256: sha256(renamed), bytes: Buffer.byteLength(renamed) } : f)) };
    assertError(await importJson(target, { manifest: manifest2, lockfile: exported.lockfile, files: files2 }), 400, 'VALIDATION_ERROR', /line 1, column 1: .*must match the file name/);
    assert.equal((await agentsOf(target)).size, 0);
  });

  test('a body over 1 MB is accepted by import; over 60 MB is 413', async () => {
    const exported = await exportFolder(clean);
    const target = await newProject('Big');
    const notes = 'n'.repeat(2 * 1024 * 1024);
    const files = { ...exported.files, 'notes/big.txt': notes };
    const manifest = { ...exported.manifest, files: [...exported.manifest.files, { path: 'notes/big.txt', sha256: sha256(notes), bytes: notes.length }] };
    const ok = await importJson(target, { manifest, lockfile: exported.lockfile, files });
    assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 300));
    assert.ok(ok.body.warnings.some((w: { code: string; file?: string }) => w.code === 'UNKNOWN_FILE' && w.file === 'notes/big.txt'));

    // Streamed: one 1 MB buffer written 61 times (chunked, no Content-Length).
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    const res = await rawRequest(server.base, {
      method: 'POST', path: `${io(target)}/import`,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/zip', 'transfer-encoding': 'chunked' },
      chunks: Array.from({ length: 61 }, () => chunk),
    });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, 'PAYLOAD_TOO_LARGE');
    assert.match(res.body.error.message, new RegExp(String(60 * 1024 * 1024)));
  });

  test('zip bombs and path traversal are refused with 400, writing nothing', async () => {
    const target = await newProject('Hostile');
    const exported = await exportFolder(clean);
    const entries = [
      { path: 'manifest.json', data: Buffer.from(JSON.stringify(exported.manifest)) },
      { path: 'parley.lock.json', data: Buffer.from(JSON.stringify(exported.lockfile)) },
      ...Object.entries(exported.files as Record<string, string>).map(([path, content]) => ({ path, data: Buffer.from(content) })),
    ];
    // 70 entries of 1 MB of zeros (one buffer, shared) deflate to ~70 KB and declare 70 MB: refused before inflating.
    const zeros = Buffer.alloc(1024 * 1024);
    const bomb = writeZip([...entries, ...Array.from({ length: 70 }, (_, i) => ({ path: `notes/zeros${i}.bin`, data: zeros }))]);
    assert.ok(bomb.length < 1024 * 1024);
    assertError(await importZip(target, bomb), 400, 'BAD_REQUEST', /expands to more than/);

    const evil = writeZip(entries);
    // Rewrite one path to ../../x (same length keeps the archive consistent).
    const good = Buffer.from('agents/draft.agent');
    const bad = Buffer.from('../../draft.agentx');
    assert.equal(good.length, bad.length);
    let at = evil.indexOf(good);
    while (at !== -1) {
      bad.copy(evil, at);
      at = evil.indexOf(good, at + 1);
    }
    assertError(await importZip(target, evil), 400, 'BAD_REQUEST', /Unsafe path/);
    assertError(await importZip(target, Buffer.from('definitely not a zip')), 400, 'BAD_REQUEST', /ZIP/);
    assert.equal((await agentsOf(target)).size, 0);
  });

  test('bad bodies: wrong content type, unknown fields, bad mode', async () => {
    const exported = await exportFolder(clean);
    const target = await newProject('Bodies');
    const folder = { manifest: exported.manifest, lockfile: exported.lockfile, files: exported.files };
    assertError(await call(server.base, 'POST', `${io(target)}/import`, { body: 'x', headers: { 'content-type': 'text/plain' } }), 400, 'BAD_REQUEST', /Content-Type/);
    assertError(await importJson(target, { ...folder, extra: 1 }), 400, 'BAD_REQUEST', /Unknown field "extra"/);
    assertError(await importJson(target, folder, '?mode=replace'), 400, 'VALIDATION_ERROR', /mode/);
    assertError(await importJson(target, { ...folder, manifest: { ...folder.manifest, formatVersion: 9 } }), 400, 'BAD_REQUEST', /formatVersion/);
    const odd = 'AGENT: x\nMODEL: builtin\nFALLBACK: "x"\n';
    const oddFolder = { ...folder, files: { ...folder.files, 'agents/Bad-Name.agent': odd }, manifest: { ...folder.manifest, files: [...folder.manifest.files, { path: 'agents/Bad-Name.agent', sha256: sha256(odd), bytes: odd.length }] } };
    assertError(await importJson(target, oddFolder), 400, 'BAD_REQUEST', /agents\/Bad-Name\.agent/);
    assert.equal((await agentsOf(target)).size, 0);
    assertError(await call(server.base, 'POST', `${io(target)}/import`, { body: '{not json', headers: { 'content-type': 'application/json' } }), 400, 'BAD_REQUEST', /not valid JSON/);
  });

  test("another tenant's project is 404 on every endpoint", async () => {
    const other = await createTenant(server, 'Other tenant');
    for (const path of ['/export/preview', '/export', '/export?format=zip']) {
      assertError(await call(server.base, 'GET', `${io(clean)}${path}`, { key: other.key }), 404, 'NOT_FOUND');
    }
    const exported = await exportFolder(clean);
    assertError(await importJson(clean, { manifest: exported.manifest, lockfile: exported.lockfile, files: exported.files }, '', other.key), 404, 'NOT_FOUND');
    // Its own project works, and the export of ours stayed ours.
    assert.equal((await call(server.base, 'GET', `${io(other.projectId)}/export/preview`, { key: other.key })).status, 200);
  });

  test('permissions: viewer 403 everywhere; import also needs project:export', async () => {
    const viewer = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'viewer', role: 'viewer' } });
    assert.equal(viewer.status, 201);
    assertError(await call(server.base, 'GET', `${io(clean)}/export/preview`, { key: viewer.body.key }), 403, 'FORBIDDEN', /project:export/);
    assertError(await call(server.base, 'GET', `${io(clean)}/export`, { key: viewer.body.key }), 403, 'FORBIDDEN', /project:export/);
    const exported = await exportFolder(clean);
    const folder = { manifest: exported.manifest, lockfile: exported.lockfile, files: exported.files };
    assertError(await importJson(clean, folder, '', viewer.body.key), 403, 'FORBIDDEN', /agent:write/);
    const writer = await call(server.base, 'POST', '/api/api-keys', { body: { name: 'writer', role: 'developer', permissions: ['agent:read', 'agent:write'] } });
    assert.equal(writer.status, 201);
    assertError(await importJson(clean, folder, '', writer.body.key), 403, 'FORBIDDEN', /project:export/);
  });
});

describe('dependency graph edges (no server)', () => {
  test('tool edges come from the program\'s tools field; agent references are handoff edges', async () => {
    const compiled = compileAgent(HELPER);
    assert.ok(compiled.ok);
    const program = { ...compiled.program, name: 'helper', tools: [{ kind: 'http', name: 'lookup_invoice' }, { kind: 'code', name: 'score' }] } as never;
    assert.deepEqual(programTools(program), [{ name: 'lookup_invoice', toolType: 'http' }, { name: 'score', toolType: 'code' }]);
    assert.deepEqual(programEdges(program), [
      { from: 'helper', to: 'lookup_invoice', type: 'tool' },
      { from: 'helper', to: 'score', type: 'tool' },
    ]);
    // No tools field (today's programs): no tool edges.
    assert.deepEqual(programTools(compiled.program), []);
  });
});
