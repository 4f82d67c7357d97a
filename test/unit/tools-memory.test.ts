import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbStore } from '../../runtime/index.js';
import { MAX_MEMORY_CONTENT_CHARS, MAX_MEMORY_STORES_PER_SESSION, MemoryBridges, MemoryService, MemoryStore, SandboxTokens } from '../../actors/tools/index.js';
import type { SessionRecord } from '../../actors/index.js';

describe('memory store and sandbox tokens', () => {
  let dir: string;
  let store: LmdbStore;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-memory-'));
    store = new LmdbStore({ path: dir, durability: 'commit' });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('without a configured secret, every SandboxTokens over one store agrees on a generated one', async () => {
    const [a, b] = [new SandboxTokens(store, { sandboxJwtSecret: undefined }), new SandboxTokens(store, { sandboxJwtSecret: undefined })];
    // Both generate at once: the get-or-create transaction makes them agree.
    const [tokenA, tokenB] = await Promise.all([a.issue({ tenantId: 't', projectId: 'p', sessionId: 's' }), b.issue({ tenantId: 't', projectId: 'p', sessionId: 's2' })]);
    assert.deepEqual(await b.verify(tokenA), { tenantId: 't', projectId: 'p', sessionId: 's' });
    assert.deepEqual(await a.verify(tokenB), { tenantId: 't', projectId: 'p', sessionId: 's2' });
    const configured = new SandboxTokens(store, { sandboxJwtSecret: 'a-configured-sandbox-secret-0123456789' });
    await assert.rejects(configured.verify(tokenA), { code: 'UNAUTHORIZED' });
  });

  test("'off' disables sandbox auth: SERVICE_UNAVAILABLE", async () => {
    const off = new SandboxTokens(store, { sandboxJwtSecret: 'off' });
    assert.equal(off.enabled, false);
    await assert.rejects(off.issue({ tenantId: 't', projectId: 'p', sessionId: 's' }), { code: 'SERVICE_UNAVAILABLE' });
    const service = new MemoryService({ tokens: off, memory: new MemoryStore(store), bridges: new MemoryBridges({ byId: () => undefined }) });
    await assert.rejects(service.handle('Bearer x', { action: 'get', memoryStoreName: 'n' }), { code: 'SERVICE_UNAVAILABLE', message: 'Sandbox auth is not configured' });
  });

  test('a bridge opened for a running call makes an unsaved session usable, and closes with it', async () => {
    const tokens = new SandboxTokens(store, { sandboxJwtSecret: undefined });
    const bridges = new MemoryBridges({ byId: () => undefined });
    const service = new MemoryService({ tokens, memory: new MemoryStore(store), bridges });
    const token = await tokens.issue({ tenantId: 't', projectId: 'p', sessionId: 'new-session' });
    await assert.rejects(service.handleToken(token, { action: 'get', memoryStoreName: 'n' }), { code: 'NOT_FOUND' });
    const release = bridges.open({ tenantId: 't', projectId: 'p', sessionId: 'new-session' });
    assert.deepEqual(await service.handleToken(token, { action: 'get', memoryStoreName: 'n' }), { action: 'get', data: null });
    const foreign = await tokens.issue({ tenantId: 'other', projectId: 'p', sessionId: 'new-session' });
    await assert.rejects(service.handleToken(foreign, { action: 'get', memoryStoreName: 'n' }), { code: 'NOT_FOUND' }, 'another tenant never shares the bridge');
    release();
    release();
    await assert.rejects(service.handleToken(token, { action: 'get', memoryStoreName: 'n' }), { code: 'NOT_FOUND' });
  });

  test('an ended session has no bridge', async () => {
    const tokens = new SandboxTokens(store, { sandboxJwtSecret: undefined });
    const ended = { id: 's', tenantId: 't', projectId: 'p', status: 'ended' } as unknown as SessionRecord;
    const service = new MemoryService({ tokens, memory: new MemoryStore(store), bridges: new MemoryBridges({ byId: () => ended }) });
    const token = await tokens.issue({ tenantId: 't', projectId: 'p', sessionId: 's' });
    await assert.rejects(service.handleToken(token, { action: 'get', memoryStoreName: 'n' }), { code: 'NOT_FOUND' });
  });

  test('content size and stores per session are bounded; deleteSession removes a session\'s stores only', async () => {
    const memory = new MemoryStore(store);
    await assert.rejects(memory.set('t', 'big', 'n', 'x'.repeat(MAX_MEMORY_CONTENT_CHARS)), { code: 'PAYLOAD_TOO_LARGE' });
    for (let i = 0; i < MAX_MEMORY_STORES_PER_SESSION; i++) await memory.set('t', 'full', `n${i}`, i);
    await assert.rejects(memory.set('t', 'full', 'one-more', 1), { code: 'PAYLOAD_TOO_LARGE' });
    await memory.set('t', 'full', 'n0', 'overwrite is fine');
    assert.equal(memory.get('t', 'full', 'n0'), 'overwrite is fine');
    await memory.set('t', 'other', 'n0', 'kept');
    assert.equal(await memory.deleteSession('t', 'full'), MAX_MEMORY_STORES_PER_SESSION);
    assert.equal(memory.get('t', 'full', 'n1'), undefined);
    assert.equal(memory.get('t', 'other', 'n0'), 'kept');
  });
});
