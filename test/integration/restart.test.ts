import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_KEY, call, chat, deployAgent, deployAgents, freePort, startTestServer, type TestServer } from './harness.js';

describe('restart: sessions and data survive', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  test('a stopped server restarted on the same data folder resumes a GATHER flow; no second bootstrap', async () => {
    const first: TestServer = await startTestServer();
    cleanups.push(() => first.close());
    assert.ok(first.parley.bootstrap, 'the first start bootstraps');
    await deployAgents(first, ['billing_support', 'human_desk', 'fraud_check']);
    const user = await call(first.base, 'POST', '/api/users', { body: { email: 'restart@example.com', password: 'restart-password-123', role: 'developer' } });
    assert.equal(user.status, 201);
    const login = await call(first.base, 'POST', '/api/auth/login', { key: null, body: { email: 'restart@example.com', password: 'restart-password-123' } });
    assert.equal(login.status, 200);

    const t1 = await chat(first, { projectId: first.projectId, agentName: 'billing_support', message: 'I want a refund' });
    assert.equal(t1.response, "What's the invoice number?");
    await first.stop();
    // Once stopped, nothing is served any more, not even on a kept-alive connection.
    await assert.rejects(fetch(`${first.base}/healthz`));

    const second = await startTestServer({ dataDir: first.dataDir });
    cleanups.push(() => second.close());
    assert.equal(second.parley.bootstrap, undefined, 'no second bootstrap on a store that has data');
    // The bootstrap key still works and there is still exactly one project: the same one.
    const projects = await call(second.base, 'GET', '/api/projects', { key: ADMIN_KEY });
    assert.equal(projects.status, 200);
    assert.deepEqual(projects.body.projects.map((p: { id: string }) => p.id), [first.projectId]);
    const keys = await call(second.base, 'GET', '/api/api-keys');
    assert.equal(keys.body.apiKeys.length, 1, 'no second bootstrap key');
    assert.equal(second.parley.deps.store.collection('tenants').count([]), 1, 'still one tenant in the store');
    assert.equal(second.parley.deps.store.collection('projects').count([]), 1, 'still one project in the store');
    // A token issued before the restart still verifies (the generated JWT secret is kept in the store).
    assert.equal((await call(second.base, 'GET', '/api/projects', { key: login.body.token })).status, 200);

    const t2 = await chat(second, { sessionId: t1.sessionId, message: 'INV-42' });
    assert.equal(t2.response, 'Why do you want a refund? (damaged, late or other)');
    const t3 = await chat(second, { sessionId: t1.sessionId, message: 'damaged' });
    assert.equal(t3.response, 'Refund for INV-42 started.');
    assert.deepEqual(t3.traceEvents.map((t) => t.type), ['delegate']);
    const detail = await call(second.base, 'GET', `/api/projects/${first.projectId}/sessions/${t1.sessionId}`);
    assert.equal(detail.body.session.messageCount, 6);
    assert.equal(detail.body.session.currentAgent, 'billing_support');
  });

  test('SIGKILL right after the answers: agent, version and session are all there after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-kill-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const mainJs = fileURLToPath(new URL('../../gateway/main.js', import.meta.url));

    /** Starts `node dist/gateway/main.js` on a free port and waits until /readyz answers 200. */
    async function startChild(): Promise<{ child: ChildProcess; base: string; stdout: () => string; exited: Promise<NodeJS.Signals | number | null> }> {
      const port = await freePort();
      const child = spawn(process.execPath, [mainJs], {
        env: {
          ...process.env,
          PARLEY_PORT: String(port), PARLEY_HOST: '127.0.0.1', PARLEY_DATA_DIR: dataDir, PARLEY_WORKERS: '2',
          PARLEY_BOOTSTRAP_API_KEY: ADMIN_KEY, PARLEY_LOG_LEVEL: 'error', PARLEY_ADMIN_TOKEN: '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
      cleanups.push(async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGKILL');
          await exited;
        }
      });
      const base = `http://127.0.0.1:${port}`;
      for (let i = 0; ; i++) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited before it was ready: ${err}`);
        if (i > 400) throw new Error(`the server did not become ready: ${err}`);
        try {
          const res = await fetch(`${base}/readyz`);
          if (res.status === 200) {
            assert.equal(((await res.json()) as { status: string }).status, 'ready');
            break;
          }
        } catch {
          // not listening yet
        }
        await sleep(50);
      }
      return { child, base, stdout: () => out, exited };
    }

    const one = await startChild();
    assert.match(one.stdout(), /first start/);
    const projects = await call(one.base, 'GET', '/api/projects');
    assert.equal(projects.status, 200);
    const projectId: string = projects.body.projects[0].id;
    const P = `/api/projects/${projectId}`;
    const created = await call(one.base, 'POST', `${P}/agents`, { body: { name: 'greeter', dslContent: 'AGENT: greeter\nFLOW: hello\n  TRIGGER: pattern /hello|hi/i\n  RESPOND: "Hello from greeter!"\nFALLBACK: "I only say hello."' } });
    assert.equal(created.status, 201);
    const compiled = await call(one.base, 'POST', `${P}/agents/greeter/versions`);
    assert.equal(compiled.status, 201);
    const c1 = await call(one.base, 'POST', '/api/v1/chat/send', { body: { projectId, message: 'hi there' } });
    assert.equal(c1.status, 200);
    const sessionId: string = c1.body.sessionId;
    const c2 = await call(one.base, 'POST', '/api/v1/chat/send', { body: { sessionId, message: 'what time is it' } });
    assert.equal(c2.status, 200);
    assert.equal(c2.body.response, 'I only say hello.');
    one.child.kill('SIGKILL');
    assert.equal(await one.exited, 'SIGKILL');

    const two = await startChild();
    assert.doesNotMatch(two.stdout(), /first start/, 'the restarted server does not bootstrap again');
    const projectsAfter = await call(two.base, 'GET', '/api/projects');
    assert.deepEqual(projectsAfter.body.projects.map((p: { id: string }) => p.id), [projectId]);
    const agent = await call(two.base, 'GET', `${P}/agents/greeter`);
    assert.equal(agent.status, 200, JSON.stringify(agent.body));
    assert.equal(agent.body.agent.versionCount, 1);
    assert.equal(agent.body.agent.id, created.body.agent.id);
    const versions = await call(two.base, 'GET', `${P}/agents/greeter/versions`);
    assert.deepEqual(versions.body.versions.map((v: { version: number }) => v.version), [1]);
    const session = await call(two.base, 'GET', `${P}/sessions/${sessionId}`);
    assert.equal(session.status, 200, JSON.stringify(session.body));
    assert.equal(session.body.session.messageCount, 4);
    const messages = await call(two.base, 'GET', `${P}/sessions/${sessionId}/messages`);
    assert.deepEqual(messages.body.messages.map((m: { role: string; text: string }) => `${m.role}:${m.text}`), [
      'user:hi there', 'agent:Hello from greeter!', 'user:what time is it', 'agent:I only say hello.',
    ]);
    // The session goes on where it was.
    const c3 = await call(two.base, 'POST', '/api/v1/chat/send', { body: { sessionId, message: 'hello again' } });
    assert.equal(c3.status, 200);
    assert.equal(c3.body.sessionId, sessionId);
    assert.equal(c3.body.response, 'Hello from greeter!');
    assert.equal((await call(two.base, 'GET', `${P}/sessions/${sessionId}`)).body.session.messageCount, 6);

    two.child.kill('SIGTERM');
    assert.equal(await two.exited, 0, 'SIGTERM stops the server cleanly');
  });
});
