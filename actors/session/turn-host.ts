import { ParleyError, randomToken, type ActorEnv } from '../../runtime/index.js';
import { DEFAULT_ASYNC_TTL_MS, type AgentProgram, type ToolCallOutcome, type ToolCallRequest, type TurnHost } from '../language/index.js';
import type { NewAnalyticsEvent } from '../analytics/analytics-event.js';
import type { ModelOverride } from '../deployments/deployment-records.js';
import { withModelOverride } from '../deployments/model-override.js';
import type { LlmEvent } from '../models/llm-event.js';
import type { ConversationServices } from './conversation-services.js';
import type { DelegateMessage, DelegateReply } from './session-messages.js';

/** Delegations may nest this deep (a delegate delegating...), no further. */
export const MAX_DELEGATION_DEPTH = 3;

/** Who a turn runs for, and what it may use; shared by session turns and delegations. */
export interface TurnScope {
  tenantId: string;
  projectId: string;
  sessionId: string;
  /** Agent versions this conversation runs; agents met for the first time are pinned into it. */
  pinned: Record<string, number>;
  /** On a deployment only `pinned` agents exist. */
  onDeployment: boolean;
  overrides: Record<string, ModelOverride>;
  /** Environment whose tool secrets the tools read (the deployment's, else dev). */
  environment: string;
  requestId: string | undefined;
  /** Span of this turn: model, tool and delegate events are its children. */
  spanId: string;
  /** Delegation depth of this turn (0 for a session turn). */
  depth: number;
  /** Unique prefix for the keys of delegation actors started by this turn. */
  delegationKey: string;
}

/** A fresh span id. */
export function newSpanId(): string {
  return randomToken(9);
}

/**
 * The TurnHost of one turn: agents at their pinned versions, delegation to delegation actors on
 * any worker, language models through the project's providers, and tools (HTTP, CODE in the
 * sandbox, ASYNC with a callback). Every model, tool and delegate call is recorded as an
 * analytics event under the turn's span.
 */
export function turnHost(env: ActorEnv, svc: ConversationServices, scope: TurnScope, onText: ((delta: string) => void) | undefined): TurnHost {
  const { tenantId, projectId, sessionId, pinned } = scope;
  let delegations = 0;
  const event = (e: Omit<NewAnalyticsEvent, 'tenantId' | 'projectId' | 'session_id' | 'channel' | 'parent_span_id'>): void =>
    svc.events.record({ ...e, tenantId, projectId, session_id: sessionId, channel: 'api', parent_span_id: scope.spanId });

  const program = async (name: string): Promise<AgentProgram | undefined> => {
    let version = pinned[name];
    if (version === undefined) {
      if (scope.onDeployment) return undefined;
      const agent = svc.agents.get(tenantId, projectId, name);
      if (!agent || agent.versionCount === 0) return undefined;
      version = agent.versionCount;
      pinned[name] = version;
    }
    return withModelOverride(svc.programs.get(tenantId, projectId, name, version), scope.overrides[name]);
  };

  const delegate = async (name: string, task: string): Promise<{ ok: true; response: string } | { ok: false; error: string }> => {
    if (scope.depth >= MAX_DELEGATION_DEPTH) return { ok: false, error: 'delegation nested too deeply' };
    if (scope.onDeployment && pinned[name] === undefined) return { ok: false, error: `agent "${name}" is not part of this deployment` };
    // A delegate is pinned like any agent the conversation uses (docs/chat.md).
    if (pinned[name] === undefined) {
      const agent = svc.agents.get(tenantId, projectId, name);
      if (agent && agent.versionCount > 0) pinned[name] = agent.versionCount;
    }
    const spanId = newSpanId();
    const request: DelegateMessage = {
      type: 'delegate', tenantId, projectId, sessionId, agentName: name, version: pinned[name], task, depth: scope.depth + 1,
      pinned: scope.onDeployment ? pinned : undefined, modelOverrides: scope.onDeployment ? scope.overrides : undefined,
      environment: scope.environment, parentSpanId: spanId,
    };
    const started = Date.now();
    let outcome: { ok: true; response: string } | { ok: false; error: string };
    try {
      const reply = await env.ask<DelegateReply>({ kind: 'delegation', key: `${scope.delegationKey}/${delegations++}` }, request, { requestId: scope.requestId });
      outcome = { ok: true, response: reply.response };
    } catch (err) {
      outcome = { ok: false, error: err instanceof ParleyError ? err.message : 'delegation failed' };
    }
    event({
      category: 'agent', event_type: 'delegate', agent_name: name, timestamp: new Date(started).toISOString(), duration_ms: Date.now() - started,
      error: outcome.ok ? null : outcome.error, span_id: spanId, metadata: { toAgent: name, task: task.slice(0, 500) },
    });
    return outcome;
  };

  const onLlmEvent = (e: LlmEvent): void =>
    event({ category: 'llm', event_type: e.event_type, agent_name: e.agent_name, timestamp: e.timestamp, duration_ms: e.duration_ms, error: e.error ?? null, span_id: newSpanId(), metadata: { ...e.metadata } });
  const complete = svc.models.bind({ tenantId, projectId, onEvent: onLlmEvent });

  const callTool = async (request: ToolCallRequest): Promise<ToolCallOutcome> => {
    const started = Date.now();
    const { tool } = request;
    let outcome: ToolCallOutcome;
    const secrets = { resolve: (toolName: string, key: string) => svc.toolSecrets.resolve(tenantId, projectId, scope.environment, toolName, key) };
    const toolScope = { tenantId, projectId, sessionId, secrets };
    if (tool.kind === 'http' && tool.async) {
      outcome = await startAsyncTool(env, svc, scope, request, toolScope);
    } else {
      const result = await svc.tools.callTool(request, toolScope);
      outcome = result.ok ? { ok: true, result: result.result } : { ok: false, error: result.error };
    }
    event({
      category: 'tool', event_type: tool.kind === 'http' && tool.async ? 'tool_call_async' : 'tool_call', agent_name: request.agentName,
      timestamp: new Date(started).toISOString(), duration_ms: Date.now() - started, error: outcome.ok ? null : outcome.error,
      span_id: newSpanId(), metadata: { tool: tool.name, kind: tool.kind },
    });
    return outcome;
  };

  return { program, delegate, complete, callTool, onText };
}

// An ASYNC tool: create the callback first (so a fast external system cannot call back before it
// exists), then make the HTTP call telling the system where to call back; the turn suspends.
async function startAsyncTool(
  env: ActorEnv,
  svc: ConversationServices,
  scope: TurnScope,
  request: ToolCallRequest,
  toolScope: Parameters<ConversationServices['tools']['callTool']>[1],
): Promise<ToolCallOutcome> {
  const tool = request.tool;
  if (tool.kind !== 'http') return { ok: false, error: `Tool ${tool.name} cannot be asynchronous` };
  if (scope.depth > 0) return { ok: false, error: `Tool ${tool.name} is asynchronous and cannot run inside a delegated task` };
  const secret = svc.toolSecrets.resolve(scope.tenantId, scope.projectId, scope.environment, tool.name, 'callback_secret') ?? null;
  const callback = await svc.callbacks.create({
    tenantId: scope.tenantId, projectId: scope.projectId, sessionId: scope.sessionId, agentName: request.agentName,
    toolName: tool.name, ttlMs: tool.ttlMs ?? DEFAULT_ASYNC_TTL_MS, secret,
  });
  const url = `${env.config.publicUrl}/api/v1/callbacks/${callback.id}`;
  const announced = { ...tool, headers: { ...tool.headers, 'X-Parley-Callback-Id': callback.id, 'X-Parley-Callback-Url': url } };
  const result = await svc.tools.callTool({ ...request, tool: announced }, toolScope);
  if (!result.ok) return { ok: false, error: result.error };
  return { ok: true, suspended: { callbackId: callback.id } };
}
