// Every turn records analytics events off the hot path: the turn span, the session start, flow
// and gather steps, tool calls, delegations and handoffs under the turn's span; deployment
// changes are recorded by the gateway thread.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, chat, deployAgent, deployAgents, startTestServer, type TestServer } from './harness.js';

interface Ev {
  category: string;
  event_type: string;
  agent_name: string | null;
  span_id: string | null;
  parent_span_id: string | null;
  duration_ms: number | null;
  metadata: Record<string, unknown>;
}

describe('analytics events of turns and deployments', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
    await deployAgents(server, ['billing_support', 'human_desk', 'fraud_check']);
  });
  after(async () => {
    await server.close();
  });

  const eventsOf = async (query: string, expected: number): Promise<Ev[]> => {
    // Recording is batched (about every second): wait for the batch, bounded.
    for (let i = 0; i < 100; i++) {
      const res = await call(server.base, 'GET', `/api/projects/${server.projectId}/analytics/events?${query}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      if (res.body.data.events.length >= expected) return res.body.data.events;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`fewer than ${expected} events for ${query}`);
  };

  test('a refund turn records its span, steps, tool call and delegation under that span', async () => {
    const turn = await chat(server, { projectId: server.projectId, message: 'I want a refund for INV-42 because it was damaged' });
    assert.equal(turn.response, 'Refund for INV-42 started.');
    const events = await eventsOf(`sessionId=${turn.sessionId}`, 8);
    const kinds = events.map((e) => `${e.category}/${e.event_type}`).sort();
    assert.deepEqual(kinds, ['agent/delegate', 'flow/flow_end', 'flow/flow_start', 'gather/gather_filled', 'gather/gather_filled', 'message/turn', 'session/session_started', 'tool/tool_call']);
    const span = events.find((e) => e.event_type === 'turn')!;
    assert.ok(span.span_id);
    assert.equal(span.parent_span_id, null);
    assert.equal(typeof span.duration_ms, 'number');
    for (const e of events.filter((x) => x.category !== 'session' && x.category !== 'message')) assert.equal(e.parent_span_id, span.span_id, `${e.category}/${e.event_type}`);
    const delegate = events.find((e) => e.event_type === 'delegate')!;
    assert.equal(delegate.agent_name, 'fraud_check');
    assert.equal(events.find((e) => e.category === 'tool')!.metadata['tool'], 'lookup_invoice');
  });

  test('a handoff is recorded as an agent event', async () => {
    const turn = await chat(server, { projectId: server.projectId, message: 'I want to speak to a human' });
    assert.equal(turn.traceEvents[0]?.type, 'handoff');
    const events = await eventsOf(`sessionId=${turn.sessionId}&category=agent`, 1);
    assert.equal(events[0]!.event_type, 'handoff');
    assert.equal(events[0]!.metadata['toAgent'], 'human_desk');
  });

  test('deployment changes are recorded', async () => {
    await deployAgent(server, 'greeter');
    const created = await call(server.base, 'POST', `/api/projects/${server.projectId}/deployments`, { body: { environment: 'staging', entryAgentName: 'greeter', agentVersionManifest: { greeter: '1' } } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const retired = await call(server.base, 'POST', `/api/projects/${server.projectId}/deployments/${created.body.deployment.id}/retire`);
    assert.equal(retired.status, 200);
    const events = await eventsOf('category=deployment', 2);
    assert.deepEqual(events.map((e) => e.event_type).sort(), ['deployment_created', 'deployment_retired']);
    assert.ok(events.every((e) => e.metadata['deploymentId'] === created.body.deployment.id));
  });
});
