import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbStore } from '../../runtime/index.js';
import { CodeSandbox, MemoryStore, ToolExecutor, type CodeToolResult, type ToolScope } from '../../actors/tools/index.js';
import type { CodeToolSpec } from '../../actors/language/index.js';
import { CaptureLog } from '../fixtures/tools/capture-log.js';
import { InMemoryToolSecrets } from '../fixtures/tools/memory-secrets.js';

const code = (source: string, over: Partial<CodeToolSpec> = {}): CodeToolSpec => ({ kind: 'code', name: 'calc', params: {}, source, timeoutMs: 1000, memoryMb: 64, ...over });

describe('CODE tools in the sandbox', () => {
  let dir: string;
  let store: LmdbStore;
  let sandbox: CodeSandbox;
  let executor: ToolExecutor;
  let log: CaptureLog;
  const scope: ToolScope = { tenantId: 't1', projectId: 'p1', sessionId: 's1', secrets: new InMemoryToolSecrets() };
  const run = (source: string, params: Record<string, unknown> = {}, over: Partial<CodeToolSpec> = {}, on: ToolScope = scope): Promise<CodeToolResult> =>
    executor.callTool({ tool: code(source, over), params, agentName: 'a' }, on) as Promise<CodeToolResult>;
  const failsWith = async (source: string, pattern: RegExp, over: Partial<CodeToolSpec> = {}): Promise<void> => {
    const result = await run(source, {}, over);
    assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result)}`);
    assert.match((result as { error: string }).error, pattern);
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-tools-'));
    store = new LmdbStore({ path: dir, durability: 'commit' });
    log = new CaptureLog();
    sandbox = new CodeSandbox({ maxThreads: 2, log });
    executor = ToolExecutor.create({ store, config: { toolsAllowPrivateNetwork: false, sandboxJwtSecret: undefined }, log, sandbox });
  });
  after(async () => {
    await executor.close();
    await executor.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('answers the default export\'s result, given the params', async () => {
    const result = await run('const twice = (n) => n * 2;\nexport default async (params, ctx) => ({ total: twice(params.a) + params.b, name: params.name })', { a: 20, b: 2, name: 'Ada' });
    assert.deepEqual(result, { ok: true, result: { total: 42, name: 'Ada' }, logs: [] });
  });

  test('a synchronous default export and helpers declared after it work', async () => {
    const result = await run('export default (params) => helper(params.x);\nfunction helper(x) { return [x, x]; }', { x: 'y' });
    assert.deepEqual(result.ok && result.result, ['y', 'y']);
  });

  test('ctx.memory set/get/delete round trip lands in the session\'s memory store', async () => {
    const result = await run(`export default async (params, ctx) => {
      const before = await ctx.memory.get('cart');
      await ctx.memory.set('cart', { items: [params.item], count: 1 });
      const after = await ctx.memory.get('cart');
      await ctx.memory.set('keep', 7);
      const deleted = await ctx.memory.delete('cart');
      const again = await ctx.memory.delete('cart');
      return { before, after, deleted, again, gone: await ctx.memory.get('cart') };
    }`, { item: 'book' });
    assert.deepEqual(result.ok && result.result, { before: null, after: { items: ['book'], count: 1 }, deleted: true, again: false, gone: null });
    const memory = new MemoryStore(store);
    assert.equal(memory.get('t1', 's1', 'keep'), 7, 'stored under [tenant, session, name]');
    const next = await run(`export default async (params, ctx) => ctx.memory.get('keep')`);
    assert.equal(next.ok && next.result, 7, 'a later call of the same session reads it');
    const other = await run(`export default async (params, ctx) => ctx.memory.get('keep')`, {}, {}, { ...scope, sessionId: 's2' });
    assert.deepEqual(other, { ok: true, result: null, logs: [] }, 'another session does not see it');
  });

  test('ctx.log lines are captured and bounded', async () => {
    const result = await run(`export default async (params, ctx) => { ctx.log('hello', { a: 1 }, 3); for (let i = 0; i < 500; i++) ctx.log('x'.repeat(5000)); return 'done'; }`);
    assert.equal(result.ok, true);
    assert.equal(result.logs[0], 'hello {"a":1} 3');
    assert.equal(result.logs.length, 101, '100 lines and a note');
    assert.ok(result.logs[1]!.length <= 1001);
    assert.match(result.logs[100]!, /dropped/);
  });

  test('with sandbox auth off, ctx.memory fails with a clear error and the rest of the call still runs', async () => {
    const off = ToolExecutor.create({ store, config: { toolsAllowPrivateNetwork: false, sandboxJwtSecret: 'off' }, log, sandbox });
    const result = await off.callTool({ tool: code(`export default async (params, ctx) => {
      try { await ctx.memory.get('k'); return 'read'; } catch (e) { return e.message; }
    }`), params: {}, agentName: 'a' }, scope);
    assert.deepEqual(result, { ok: true, result: 'Sandbox auth is not configured', logs: [] });
  });

  describe('escapes fail', () => {
    test('require, process, Buffer, fetch and timers do not exist', async () => {
      const result = await run('export default async () => [typeof require, typeof process, typeof Buffer, typeof fetch, typeof setTimeout, typeof module, typeof ArrayBuffer, typeof SharedArrayBuffer, typeof WebAssembly]');
      assert.deepEqual(result.ok && result.result, Array(9).fill('undefined'));
      await failsWith("export default async () => require('fs').readFileSync('/etc/passwd', 'utf8')", /ReferenceError: require is not defined/);
      await failsWith('export default async () => process.env', /ReferenceError: process is not defined/);
    });

    test('import() and static import are refused', async () => {
      await failsWith("export default async () => (await import('node:fs')).readFileSync('/etc/passwd', 'utf8')", /import is not available/);
      await failsWith("import fs from 'node:fs';\nexport default async () => 1", /import is not available/);
    });

    test("this.constructor.constructor('return process')() and its variants fail", async () => {
      await failsWith("export default async function () { return this.constructor.constructor('return process')(); }", /TypeError/);
      await failsWith("const p = this.constructor.constructor('return process')();\nexport default async () => p", /TypeError/);
      await failsWith("export default async (params, ctx) => ctx.constructor.constructor('return process')()", /EvalError: Code generation from strings disallowed/);
      await failsWith("export default async (params, ctx) => ctx.memory.get.constructor('return process')()", /EvalError/);
      await failsWith("export default async () => (async () => {}).constructor('return process')()", /EvalError/);
      await failsWith("export default async () => eval('1 + 1')", /EvalError/);
    });

    test('errors carried out of a failed ctx call lead nowhere', async () => {
      const result = await run(`export default async (params, ctx) => {
        try { await ctx.memory.set('', 1); } catch (e) { try { return e.constructor.constructor('return process')(); } catch (e2) { return e2.name; } }
      }`);
      assert.deepEqual(result.ok && result.result, 'EvalError');
    });
  });

  describe('limits', () => {
    test('an infinite loop ends with a timeout error and the pool serves the next call', async () => {
      await failsWith('export default async () => { while (true) {} }', /ran longer than 300 ms/, { timeoutMs: 300 });
      await failsWith("export default async (params, ctx) => { await ctx.memory.get('x'); for (;;) {} }", /ran longer than 300 ms/, { timeoutMs: 300 });
      await failsWith('while (true) {}\nexport default async () => 1', /ran longer than 300 ms/, { timeoutMs: 300 });
      const next = await run('export default async () => "still here"');
      assert.deepEqual(next.ok && next.result, 'still here');
    });

    test('a 1 GB allocation ends with a memory error and the next call still works', async () => {
      await failsWith('export default async () => { const chunks = []; for (let i = 0; i < 1024; i++) chunks.push(new Array(131072).fill(i + 0.5)); return chunks.length; }', /used more than 64 MB of memory/, { timeoutMs: 10_000 });
      const next = await run('export default async (p) => p.n + 1', { n: 1 });
      assert.deepEqual(next.ok && next.result, 2);
    });

    test('a call running in parallel with a runaway one is unaffected', async () => {
      const [runaway, hog, fine] = await Promise.all([
        run('export default async () => { while (true) {} }', {}, { timeoutMs: 500 }),
        run('export default async () => { const a = []; for (;;) a.push(new Array(131072).fill(1.5)); }', {}, { timeoutMs: 10_000 }),
        run('export default async (p) => p.x * 3', { x: 14 }),
      ]);
      assert.equal(runaway.ok, false);
      assert.equal(hog.ok, false);
      assert.match((hog as { error: string }).error, /used more than 64 MB/);
      assert.deepEqual(fine, { ok: true, result: 42, logs: [] });
    });

    test('a promise that can never settle fails at once', async () => {
      await failsWith('export default async () => new Promise(() => {})', /never settles/, { timeoutMs: 10_000 });
    });

    test('results must be JSON-serialisable and bounded', async () => {
      await failsWith('export default async () => 10n', /not JSON-serialisable/);
      await failsWith("export default async () => 'x'.repeat(300000)", /larger than 256000 characters/);
      const undef = await run('export default async () => undefined');
      assert.deepEqual(undef.ok && undef.result, null);
    });

    test('thrown errors become tool errors with their message; bad modules are explained', async () => {
      await failsWith("export default async () => { throw new RangeError('too far'); }", /RangeError: too far/);
      await failsWith('export default async () => {', /does not compile/);
      await failsWith('export const x = 1;', /exactly one export/);
      await failsWith('export default 42', /must export a function/);
    });
  });
});
