import { Type } from '@sinclair/typebox';
import { cuid, isCuid, ParleyError, toErrorValue } from '../../runtime/index.js';
import { DeploymentStore, MAX_MESSAGE_LENGTH, admitNewSession, chatDeployment, chooseEntryAgent, deploymentEntryAgent, type Continuation, type TextDeltaChunk, type TurnMessage, type TurnReply } from '../../actors/index.js';
import type { GatewayDeps, RouteModule } from '../app.js';
import { json, type RouteContext } from '../http.js';
import { admitChat } from '../limits/gateway-limits.js';
import { sseResult, type SseWriter } from '../sse.js';
import { compileValidator } from '../validate.js';

const chatFields = {
  message: Type.String({ minLength: 1, maxLength: MAX_MESSAGE_LENGTH }),
  projectId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  agentName: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  deploymentId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  endpointSlug: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
};
const ChatBody = compileValidator(Type.Object(chatFields, { additionalProperties: false }));
type ChatInput = ReturnType<typeof ChatBody>;

/**
 * Builds the session actor's turn message. A chat continues `sessionId` when given (it must be
 * the tenant's, else 404) and otherwise starts a new session in `projectId`.
 */
function turnOf(deps: GatewayDeps, ctx: RouteContext, input: ChatInput, stream: boolean): { sessionId: string; turn: TurnMessage } {
  const tenantId = ctx.principal.tenantId;
  const project = input.projectId !== undefined ? deps.tenancy.requireProject(tenantId, input.projectId) : undefined;
  // A named deployment decides the project, agents, versions and overrides (docs/deployments.md).
  const deployment = chatDeployment(DeploymentStore.of(deps.store), tenantId, input);
  const deploymentId = deployment?.id;
  if (input.sessionId !== undefined) {
    // Ids this service never issues cannot name a session: no actor is woken for them.
    if (!isCuid(input.sessionId)) throw new ParleyError('NOT_FOUND', 'Session not found');
    if (stream) {
      // The actor refuses a foreign or unknown session too; a stream checks first so the 404 is
      // JSON, not an event after a 200. Request/response chats leave it to the actor alone.
      const owner = deps.sessions.owner(input.sessionId);
      if (!owner || owner.tenantId !== tenantId || (input.projectId !== undefined && owner.projectId !== input.projectId)) {
        throw new ParleyError('NOT_FOUND', 'Session not found');
      }
    }
    return { sessionId: input.sessionId, turn: { type: 'turn', tenantId, projectId: input.projectId, create: false, agentName: undefined, message: input.message, stream, deploymentId } };
  }
  if (deployment) {
    // Refused here too (the actor decides again) so a stream's refusal is JSON, not an event.
    admitNewSession(deployment);
    deploymentEntryAgent(deployment, input.agentName, deps.agents);
    return { sessionId: cuid(), turn: { type: 'turn', tenantId, projectId: deployment.projectId, create: true, agentName: input.agentName, message: input.message, stream, deploymentId } };
  }
  if (!project) throw new ParleyError('BAD_REQUEST', 'Send sessionId to continue a session or projectId to start one', { field: 'projectId' });
  // Likewise a stream checks for an entry agent (unknown agentName, nothing compiled) up front.
  if (stream) chooseEntryAgent(project, deps.agents, input.agentName);
  return { sessionId: cuid(), turn: { type: 'turn', tenantId, projectId: project.id, create: true, agentName: input.agentName, message: input.message, stream } };
}

/** The spec's chat response, plus actions, suspension and pending continuations when there are any. */
function chatResponse(reply: TurnReply): Record<string, unknown> {
  const body: Record<string, unknown> = { success: true, sessionId: reply.sessionId, response: reply.response, traceEvents: reply.traceEvents, agentName: reply.agentName, usage: reply.usage, latencyMs: reply.latencyMs };
  if (reply.actions) body['actions'] = reply.actions;
  if (reply.suspended) body['suspended'] = true;
  if (reply.continuations.length > 0) body['continuations'] = reply.continuations;
  return body;
}

/** How often a stream left open on a suspended turn asks for the continuation. */
const CONTINUATION_POLL_MS = 500;

/**
 * Keeps a stream open after a turn suspended for an ASYNC tool: polls the session for the
 * continuation and sends it as a `continuation` event, until it arrives, the wait passes the
 * callback's deadline, or the client leaves.
 */
function awaitContinuation(deps: GatewayDeps, sse: SseWriter, sessionId: string, tenantId: string, requestId: string): Promise<void> {
  const deadline = Date.now() + maxWaitMs(deps, sessionId);
  return new Promise((resolve) => {
    const poll = (): void => {
      if (sse.closed || Date.now() > deadline) {
        resolve();
        return;
      }
      deps.actors.ask<Continuation[]>({ kind: 'session', key: sessionId }, { type: 'take-continuations', tenantId }, { requestId }).then(
        (taken) => {
          for (const c of taken) sse.event('continuation', c);
          if (taken.length > 0) resolve();
          else setTimeout(poll, CONTINUATION_POLL_MS);
        },
        () => resolve(),
      );
    };
    setTimeout(poll, CONTINUATION_POLL_MS);
  });
}

// The callback's own deadline bounds the wait (plus a second for the resume to run).
function maxWaitMs(deps: GatewayDeps, sessionId: string): number {
  const expiresAt = deps.sessions.byId(sessionId)?.conversation.pending?.expiresAt;
  const left = expiresAt ? Date.parse(expiresAt) - Date.now() : 0;
  return Math.max(0, Math.min(left, 24 * 3600_000)) + 1000;
}

/** POST /api/v1/chat/send, /agent and /stream (docs/chat.md). */
export const chatRoutes: RouteModule = (deps) => {
  const requestReply = async (ctx: RouteContext, requireProject: boolean) => {
    const input = ChatBody(ctx.body);
    if (requireProject && input.projectId === undefined) throw new ParleyError('VALIDATION_ERROR', 'projectId is required', { field: 'projectId' });
    const { sessionId, turn } = turnOf(deps, ctx, input, false);
    admitChat(deps, ctx.principal.tenantId, sessionId);
    const reply = await deps.actors.ask<TurnReply>({ kind: 'session', key: sessionId }, turn, { requestId: ctx.req.requestId });
    return json(chatResponse(reply));
  };
  return [
    { method: 'POST', path: '/api/v1/chat/send', auth: 'principal', permission: 'chat:write', handler: (ctx) => requestReply(ctx, false) },
    { method: 'POST', path: '/api/v1/chat/agent', auth: 'principal', permission: 'chat:write', handler: (ctx) => requestReply(ctx, true) },
    {
      method: 'POST',
      path: '/api/v1/chat/stream',
      auth: 'principal',
      permission: 'chat:write',
      handler: (ctx) => {
        const input = ChatBody(ctx.body);
        // Everything that can be refused is refused here, as JSON, before the stream starts.
        const { sessionId, turn } = turnOf(deps, ctx, input, true);
        admitChat(deps, ctx.principal.tenantId, sessionId);
        return sseResult(deps.config.sseHeartbeatMs, (sse) => {
          sse.event('session', { sessionId });
          deps.actors
            .ask<TurnReply>({ kind: 'session', key: sessionId }, turn, {
              requestId: ctx.req.requestId,
              onChunk: (chunk) => sse.event('text_delta', { delta: (chunk as TextDeltaChunk).delta }),
            })
            .then(
              (reply) => {
                for (const t of reply.traceEvents) sse.event('trace', t);
                const { inputTokens, outputTokens } = reply.usage;
                sse.event('usage', { inputTokens, outputTokens });
                sse.event('complete', { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, latencyMs: reply.latencyMs, sessionId, agentName: reply.agentName });
                for (const c of reply.continuations) sse.event('continuation', c);
                if (!reply.suspended) return undefined;
                sse.event('suspended', { sessionId });
                return awaitContinuation(deps, sse, sessionId, ctx.principal.tenantId, ctx.req.requestId);
              },
              (err: unknown) => {
                const value = toErrorValue(err);
                sse.event('error', { code: value.code, message: value.message, requestId: ctx.req.requestId });
              },
            )
            .finally(() => sse.end());
        });
      },
    },
  ];
};
