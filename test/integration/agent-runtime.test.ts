// The agent runtime end to end over the public HTTP API only: agents are created and compiled
// through /api/projects/{p}/agents, and every behaviour is observed through the chat endpoints.
// HTTP tools, CODE tools in the sandbox with ctx.memory, language models through a fake OpenAI
// server, parallel delegation, ACTION_SET and linked contacts. (ASYNC callbacks are tested elsewhere.)
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { assertError, call, chat, deployAgent, readSse, startTestServer, ADMIN_KEY, type TestServer } from './harness.js';
import { FakeApi } from '../fixtures/tools/fake-api.js';
import { startFakeOpenAi, type FakeOpenAi } from '../fixtures/models/fake-openai-server.js';
import { actionsAgent, codeAgent, contactAgent, delegateAgent, httpToolAgent, modelAgent, screenerAgent, screenerWithGhostAgent } from '../fixtures/agents/runtime-agents.js';

const API_SECRET = 'sk-weather-INTEGRATION-7f3a9c';
let server: TestServer;
// A local node:http server standing in for the third-party API an HTTP tool calls (tests cannot
// reach the outside world), hence PARLEY_TOOLS_ALLOW_PRIVATE=true on the server.
let api: FakeApi;
// Stands in for the OpenAI API; each test scripts the replies it needs.
let openai: FakeOpenAi;

before(async () => {
  server = await startTestServer({ env: { PARLEY_TOOLS_ALLOW_PRIVATE: 'true', PARLEY_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}` } });
  api = await FakeApi.start();
  openai = await startFakeOpenAi();
});
after(async () => {
  await openai.close();
  await api.close();
  await server.close();
});

/**
 * The input tokens the builtin classifier counts for a message of plain words (one per word): a
 * model agent's input usage is that plus the model's prompt tokens (docs/language.md, Language models).
 */
function classifierTokens(message: string): number {
  return message.split(/\s+/).filter(Boolean).length;
}

/** One turn on /api/v1/chat/agent; throws unless 200. */
function turn(message: string, options: { agentName?: string; sessionId?: string } = {}) {
  return chat(server, { projectId: server.projectId, message, ...options }, { endpoint: 'agent' });
}

/** One turn on /api/v1/chat/stream, parsed into its events. */
async function streamTurn(body: Record<string, unknown>) {
  const res = await fetch(`${server.base}/api/v1/chat/stream`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ projectId: server.projectId, ...body }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  return readSse(res);
}

test('HTTP tool: rendered URL and params reach the API, the secret header arrives, the result is rendered', async () => {
  const created = await call(server.base, 'POST', '/api/tool-secrets', { body: { projectId: server.projectId, toolName: 'forecast', secretKey: 'api_key', value: API_SECRET } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.secret.environment, 'dev');
  await deployAgent(server, 'weather', { source: httpToolAgent(api.base) });

  const callsBefore = api.received.length;
  const reply = await turn('weather for Sao Paulo please', { agentName: 'weather' });
  const received = api.received.slice(callsBefore);
  assert.equal(received.length, 1, 'one call to the API');
  const sent = received[0]!;
  assert.equal(sent.method, 'GET');
  // The GATHERed city is percent-encoded into the path; the literal query parameter is kept.
  assert.equal(sent.url, '/echo/forecast/Sao%20Paulo?days=3&units=metric');
  assert.equal(sent.headers['x-api-key'], API_SECRET);
  assert.equal(sent.headers['accept'], 'application/json');
  assert.equal(reply.response, 'Forecast for Sao Paulo: HTTP 200, GET /echo/forecast/Sao%20Paulo?days=3&units=metric');
  assert.ok(!JSON.stringify(reply.body).includes(API_SECRET), 'the secret never reaches the chat response');
  assert.equal(reply.agentName, 'weather');
});

test('HTTP tool: the API answering 500 takes the flow\'s error branch, and the session goes on', async () => {
  const callsBefore = api.received.length;
  const failed = await turn('outage report', { agentName: 'weather' });
  assert.equal(api.received.length, callsBefore + 1, 'the failing API was called');
  assert.equal(api.received.at(-1)!.url, '/status/500?city=x');
  assert.equal(failed.response, 'The weather service failed: Tool outage answered HTTP 500');
  assert.ok(!failed.response.includes(API_SECRET));

  const next = await turn('weather for Oslo', { sessionId: failed.sessionId });
  assert.equal(next.sessionId, failed.sessionId);
  assert.match(next.response, /^Forecast for Oslo: HTTP 200/);
});

test('CODE tool: computes from params and reads on turn 2 what it stored with ctx.memory on turn 1', async () => {
  await deployAgent(server, 'tally', { source: codeAgent });
  const first = await turn('add 5', { agentName: 'tally' });
  assert.equal(first.response, 'added 10 (was 0), total 10');
  const second = await turn('add 7', { sessionId: first.sessionId });
  assert.equal(second.response, 'added 14 (was 10), total 24', 'the second turn reads what the first stored');

  // Memory is per session: another session starts from nothing.
  const other = await turn('add 1', { agentName: 'tally' });
  assert.notEqual(other.sessionId, first.sessionId);
  assert.equal(other.response, 'added 2 (was 0), total 2');
});

test('CODE tool: an infinite loop ends in the error branch, and the server still answers', async () => {
  const spun = await turn('spin forever', { agentName: 'tally' });
  assert.equal(spun.response, 'The loop was stopped: Tool spin ran longer than 300 ms');
  const after = await turn('add 3', { sessionId: spun.sessionId });
  assert.equal(after.response, 'added 6 (was 0), total 6');
  const again = await turn('spin again', { sessionId: spun.sessionId });
  assert.match(again.response, /^The loop was stopped/);
});

test('model settings point openai at the fake server', async () => {
  const res = await call(server.base, 'PUT', `/api/projects/${server.projectId}/model-settings`, {
    body: {
      providers: {
        openai: { kind: 'openai', baseUrl: `${openai.base}/v1`, apiKey: 'sk-test-agent-runtime-0001' },
        flaky: { kind: 'openai', baseUrl: `${openai.base}/v1`, apiKey: 'sk-test-agent-runtime-0002', timeouts: { firstByteMs: 300, totalMs: 1000 } },
      },
    },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.modelSettings.providers.openai.hasApiKey, true);
  await deployAgent(server, 'assistant', { source: modelAgent('openai/gpt-4o-mini', 'assistant') });
  await deployAgent(server, 'flaky_assistant', { source: modelAgent('flaky/gpt-4o-mini', 'flaky_assistant') });
});

test('model agent: the fake\'s text and usage come back; the request carries persona, model and key', async () => {
  openai.script({ kind: 'stream', text: ['Paris is ', 'the capital', ' of France.'], usage: { prompt_tokens: 42, completion_tokens: 7 } });
  const callsBefore = openai.requests.length;
  const reply = await turn('what is the capital of France', { agentName: 'assistant' });
  assert.equal(reply.response, 'Paris is the capital of France.');
  assert.deepEqual(reply.body.usage, { inputTokens: 42 + classifierTokens('what is the capital of France'), outputTokens: 7 });
  assert.equal(reply.agentName, 'assistant');
  assert.equal(openai.requests.length, callsBefore + 1);
  const sent = openai.requests.at(-1)!;
  assert.equal(sent.headers['authorization'], 'Bearer sk-test-agent-runtime-0001');
  assert.equal(sent.body.model, 'gpt-4o-mini');
  assert.equal(sent.body.stream, true);
  assert.ok(JSON.stringify(sent.body.messages).includes('You answer in one sentence.'), 'the persona is in the system prompt');
  assert.equal(sent.body.messages.at(-1).role, 'user');
  assert.match(JSON.stringify(sent.body.messages.at(-1).content), /capital of France/);
});

test('model agent on /chat/stream: the deltas concatenate to the fake\'s text, usage matches', async () => {
  openai.script({ kind: 'stream', text: ['Streaming ', 'works ', 'fine.'], usage: { prompt_tokens: 13, completion_tokens: 3 } });
  const { events } = await streamTurn({ agentName: 'assistant', message: 'tell me something' });
  const deltas = events.filter((e) => e.event === 'text_delta').map((e) => e.data.delta as string);
  assert.ok(deltas.length >= 2, `several deltas, got ${deltas.length}`);
  assert.equal(deltas.join(''), 'Streaming works fine.');
  const inputTokens = 13 + classifierTokens('tell me something');
  assert.deepEqual(events.find((e) => e.event === 'usage')?.data, { inputTokens, outputTokens: 3 });
  const complete = events.find((e) => e.event === 'complete')?.data;
  assert.equal(complete?.totalTokens, inputTokens + 3);
  assert.equal(complete?.agentName, 'assistant');
  assert.equal(events.some((e) => e.event === 'error'), false);
});

test('model agent: a tool call round runs the CODE tool and the model answers with its result', async () => {
  openai.script(
    { kind: 'stream', toolCalls: [{ id: 'call_double_1', name: 'double', argumentChunks: ['{"n"', ': 21}'] }], usage: { prompt_tokens: 20, completion_tokens: 5 } },
    { kind: 'stream', text: ['Twice 21 is ', '42.'], usage: { prompt_tokens: 30, completion_tokens: 4 } },
  );
  const callsBefore = openai.requests.length;
  const reply = await turn('double 21 for me', { agentName: 'assistant' });
  assert.equal(reply.response, 'Twice 21 is 42.');
  assert.equal(openai.requests.length, callsBefore + 2, 'asked twice: once for the tool call, once after it');
  const first = openai.requests[callsBefore]!.body;
  assert.ok(first.tools.some((t: any) => t.function?.name === 'double'), 'the tool is offered to the model');
  const second = openai.requests[callsBefore + 1]!.body;
  const toolMessage = second.messages.find((m: any) => m.role === 'tool');
  assert.ok(toolMessage, `a tool message in ${JSON.stringify(second.messages)}`);
  assert.equal(toolMessage.tool_call_id, 'call_double_1');
  assert.deepEqual(JSON.parse(toolMessage.content), { doubled: 42 });
  assert.deepEqual(reply.body.usage, { inputTokens: 50 + classifierTokens('double 21 for me'), outputTokens: 9 }, 'the model usage of both calls');
});

test('model agent: the provider answering 500 is a 503 SERVICE_UNAVAILABLE; the session works afterwards', async () => {
  openai.script({ kind: 'stream', text: ['First answer.'], usage: { prompt_tokens: 3, completion_tokens: 2 } });
  const first = await turn('hello model', { agentName: 'assistant' });
  openai.script({ kind: 'error', status: 500, message: 'The server had an error while processing your request.', type: 'server_error' });
  const failed = await call(server.base, 'POST', '/api/v1/chat/agent', { body: { projectId: server.projectId, sessionId: first.sessionId, message: 'again please' } });
  assertError(failed, 503, 'SERVICE_UNAVAILABLE', /Model provider "openai" failed \(HTTP 500\)/);

  openai.script({ kind: 'stream', text: ['Back again.'], usage: { prompt_tokens: 5, completion_tokens: 2 } });
  const next = await turn('are you there?', { sessionId: first.sessionId });
  assert.equal(next.sessionId, first.sessionId);
  assert.equal(next.response, 'Back again.');
});

test('model agent: a hanging provider hits the short first-byte deadline (503) and the session works afterwards', async () => {
  openai.script({ kind: 'stream', text: ['Fine so far.'], usage: { prompt_tokens: 3, completion_tokens: 3 } });
  const first = await turn('hi flaky', { agentName: 'flaky_assistant' });
  assert.equal(first.response, 'Fine so far.');

  openai.script({ kind: 'hang' });
  const hung = await call(server.base, 'POST', '/api/v1/chat/agent', { body: { projectId: server.projectId, sessionId: first.sessionId, message: 'are you stuck?' } });
  assertError(hung, 503, 'SERVICE_UNAVAILABLE', /did not answer in time/);
  assert.equal(hung.body.error.details?.timeoutMs, 300);

  // The same failure on a stream is an `error` event after the session event.
  openai.script({ kind: 'hang' });
  const { events } = await streamTurn({ sessionId: first.sessionId, message: 'still stuck?' });
  assert.equal(events[0]!.event, 'session');
  const error = events.find((e) => e.event === 'error')?.data;
  assert.equal(error?.code, 'SERVICE_UNAVAILABLE');
  assert.match(error?.message ?? '', /did not answer in time/);
  assert.equal(events.some((e) => e.event === 'complete'), false);

  openai.script({ kind: 'stream', text: ['Recovered.'], usage: { prompt_tokens: 4, completion_tokens: 1 } });
  const next = await turn('and now?', { sessionId: first.sessionId });
  assert.equal(next.response, 'Recovered.');
});

test('parallel delegation: two delegate trace events, both answers in the response', async () => {
  await deployAgent(server, 'kyc_check', { source: delegateAgent('kyc_check', 'KYC clear') });
  await deployAgent(server, 'sanctions_check', { source: delegateAgent('sanctions_check', 'no sanctions hit') });
  await deployAgent(server, 'screener', { source: screenerAgent });
  const reply = await turn('screen Ada Lovelace', { agentName: 'screener' });
  assert.equal(reply.response, 'KYC: KYC clear (screen screen Ada Lovelace). Sanctions: no sanctions hit (screen screen Ada Lovelace).');
  const delegates = reply.traceEvents.filter((e) => e.type === 'delegate');
  assert.equal(delegates.length, 2);
  assert.deepEqual(delegates.map((d) => d.data.toAgent).sort(), ['kyc_check', 'sanctions_check']);
  for (const d of delegates) {
    assert.equal(d.data.fromAgent, 'screener');
    assert.equal(d.data.task, 'screen screen Ada Lovelace');
    assert.equal(typeof d.data.duration_ms, 'number');
    assert.ok(d.data.duration_ms >= 0);
    assert.equal(d.data.ok, true);
  }

  // The stream shows the same delegations as `trace` events.
  const { events } = await streamTurn({ agentName: 'screener', message: 'screen Grace' });
  const traces = events.filter((e) => e.event === 'trace' && e.data.type === 'delegate');
  assert.deepEqual(traces.map((t) => t.data.data.toAgent).sort(), ['kyc_check', 'sanctions_check']);
});

test('parallel delegation: a delegate with no compiled version takes the error branch, the chat succeeds', async () => {
  const ghost = await call(server.base, 'POST', `/api/projects/${server.projectId}/agents`, { body: { name: 'ghost_check', dslContent: delegateAgent('ghost_check', 'boo') } });
  assert.equal(ghost.status, 201, JSON.stringify(ghost.body));
  await deployAgent(server, 'screener_ghost', { source: screenerWithGhostAgent });
  const reply = await turn('screen Bob', { agentName: 'screener_ghost' });
  assert.equal(reply.response, 'Some checks failed: ghost_check: Agent "ghost_check" has no compiled version');
  const delegates = reply.traceEvents.filter((e) => e.type === 'delegate');
  assert.equal(delegates.length, 2);
  const byAgent = Object.fromEntries(delegates.map((d) => [d.data.toAgent, d.data]));
  assert.equal(byAgent['kyc_check'].ok, true);
  assert.equal(byAgent['ghost_check'].ok, false);
  assert.equal(typeof byAgent['ghost_check'].duration_ms, 'number');
});

test('ACTION_SET: the chat response carries buttons, selects and text inputs', async () => {
  await deployAgent(server, 'feedback', { source: actionsAgent });
  const reply = await turn('I am done', { agentName: 'feedback' });
  assert.equal(reply.response, 'Your refund has started.');
  assert.deepEqual(reply.body.actions, {
    buttons: [{ label: 'Track refund', value: 'track' }, { label: 'Talk to feedback', value: 'talk' }, { label: 'Later', value: 'Later' }],
    selects: [{ label: 'Rate us', options: ['1', '2', '3'] }],
    textInputs: [{ label: 'Anything else?' }],
  });
  // A turn without ACTION_SET has no actions field.
  const plain = await turn('hello', { sessionId: reply.sessionId });
  assert.equal(plain.response, 'Say done.');
  assert.equal('actions' in plain.body, false);
});

test('a contact linked to the session appears in {{contact.displayName}} on the next turn', async () => {
  await deployAgent(server, 'concierge', { source: contactAgent });
  const first = await turn('hi', { agentName: 'concierge' });
  assert.equal(first.response, 'Hello there, . (agent concierge)');
  const contact = await call(server.base, 'POST', '/api/contacts', { body: { displayName: 'Ada Lovelace', identity: 'ada@example.com', identityType: 'email' } });
  assert.equal(contact.status, 201, JSON.stringify(contact.body));
  const linked = await call(server.base, 'POST', `/api/contacts/${contact.body.data.id}/link-session`, { body: { sessionId: first.sessionId } });
  assert.equal(linked.status, 200, JSON.stringify(linked.body));
  const next = await turn('hi again', { sessionId: first.sessionId });
  assert.equal(next.response, 'Hello there, Ada Lovelace. (agent concierge)');
  // Other sessions are not linked.
  const other = await turn('hi', { agentName: 'concierge' });
  assert.equal(other.response, 'Hello there, . (agent concierge)');
});
