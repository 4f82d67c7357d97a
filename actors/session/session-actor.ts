import { performance } from 'node:perf_hooks';
import { ParleyError, type Actor, type ActorEnv, type ActorKind, type MessageContext } from '../../runtime/index.js';
import { initialState, runDelegation, runTurn, type AgentProgram, type TurnHost } from '../language/index.js';
import { AgentStore } from '../agents/agent-store.js';
import { ProgramCache } from '../agents/program-cache.js';
import { TenancyStore } from '../tenancy/tenancy-store.js';
import { deploymentEntryAgent } from '../deployments/chat-target.js';
import { DeploymentStore } from '../deployments/deployment-store.js';
import { resolveManifest } from '../deployments/manifest.js';
import { withModelOverride } from '../deployments/model-override.js';
import { admitContinuedSession, admitNewSession } from '../deployments/session-admission.js';
import { chooseEntryAgent } from './entry-agent.js';
import type { DelegateMessage, DelegateReply, SessionMessage, TextDeltaChunk, TurnMessage, TurnReply } from './session-messages.js';
import type { SessionRecord } from './session-records.js';
import { SessionStore } from './session-store.js';

/** Longest user message accepted, in characters. */
export const MAX_MESSAGE_LENGTH = 32_000;

/** Thread-wide services of the session and delegation actors, created once per thread. */
export interface ConversationServices {
  tenancy: TenancyStore;
  agents: AgentStore;
  sessions: SessionStore;
  programs: ProgramCache;
  deployments: DeploymentStore;
}

/** Builds the per-thread services the conversation actors share. */
export function conversationServices(env: ActorEnv): ConversationServices {
  const agents = new AgentStore(env.store);
  return { tenancy: new TenancyStore(env.store), agents, sessions: new SessionStore(env.store), programs: new ProgramCache(agents), deployments: DeploymentStore.of(env.store) };
}

/**
 * One actor per chat session (key: the session id). It holds the session in memory between
 * turns, runs each turn of the agent program, and persists the new state and transcript before
 * it replies, so an answered turn survives a crash and a restarted actor resumes from it.
 */
class SessionActor implements Actor {
  readonly #key: string;
  readonly #env: ActorEnv;
  readonly #svc: ConversationServices;
  #record: SessionRecord | undefined;

  constructor(key: string, env: ActorEnv, svc: ConversationServices) {
    this.#key = key;
    this.#env = env;
    this.#svc = svc;
    this.#record = svc.sessions.byId(key);
  }

  receive(message: unknown, ctx: MessageContext): Promise<TurnReply> {
    const msg = message as SessionMessage;
    switch (msg.type) {
      case 'turn':
        return this.#turn(msg, ctx);
    }
  }

  async #turn(msg: TurnMessage, ctx: MessageContext): Promise<TurnReply> {
    const started = performance.now();
    const existing = this.#record;
    if (existing && (existing.tenantId !== msg.tenantId || (msg.projectId !== undefined && existing.projectId !== msg.projectId) || (msg.deploymentId !== undefined && existing.deploymentId !== msg.deploymentId))) {
      throw new ParleyError('NOT_FOUND', 'Session not found');
    }
    if (!existing && !msg.create) throw new ParleyError('NOT_FOUND', 'Session not found');
    if (existing?.deploymentId) {
      // A retired deployment drains: its sessions go on until they go idle (docs/deployments.md).
      const deployment = this.#svc.deployments.get(existing.tenantId, existing.projectId, existing.deploymentId);
      if (deployment) admitContinuedSession(deployment, existing.updatedAt, Date.now(), this.#env.config.sessionIdleMs);
    }
    const session = existing ?? this.#newSession(msg);
    const pinned = { ...session.agentVersions };
    // A deployment session runs exactly its manifest: agents outside it are unknown to it.
    const onDeployment = Boolean(session.deploymentId);
    const overrides = session.modelOverrides ?? {};
    const { tenantId, projectId } = session;
    const svc = this.#svc;
    const env = this.#env;
    let delegations = 0;

    const host: TurnHost = {
      program: async (name: string): Promise<AgentProgram | undefined> => {
        let version = pinned[name];
        if (version === undefined) {
          if (onDeployment) return undefined;
          const agent = svc.agents.get(tenantId, projectId, name);
          if (!agent || agent.versionCount === 0) return undefined;
          version = agent.versionCount;
          pinned[name] = version;
        }
        return withModelOverride(svc.programs.get(tenantId, projectId, name, version), overrides[name]);
      },
      delegate: async (name: string, task: string) => {
        if (onDeployment && pinned[name] === undefined) return { ok: false as const, error: `agent "${name}" is not part of this deployment` };
        // A delegate is pinned like any agent the session uses (docs/chat.md).
        if (pinned[name] === undefined) {
          const agent = svc.agents.get(tenantId, projectId, name);
          if (agent && agent.versionCount > 0) pinned[name] = agent.versionCount;
        }
        const request: DelegateMessage = {
          type: 'delegate', tenantId, projectId, agentName: name, version: pinned[name], task, depth: 1,
          pinned: onDeployment ? pinned : undefined, modelOverrides: onDeployment ? overrides : undefined,
        };
        try {
          const reply = await env.ask<DelegateReply>({ kind: 'delegation', key: `${session.id}/${session.messageCount}/${delegations++}` }, request, { requestId: ctx.requestId });
          return { ok: true as const, response: reply.response };
        } catch (err) {
          return { ok: false as const, error: err instanceof ParleyError ? err.message : 'delegation failed' };
        }
      },
      onText: msg.stream ? (delta: string) => ctx.emit({ type: 'text_delta', delta } satisfies TextDeltaChunk) : undefined,
    };

    const result = await runTurn(session.conversation, { message: msg.message, sessionId: session.id }, host);
    const now = new Date().toISOString();
    const next: SessionRecord = {
      ...session,
      agentVersions: pinned,
      conversation: result.state,
      handoffCount: result.state.handoffCount,
      messageCount: session.messageCount + 2,
      updatedAt: now,
    };
    await svc.sessions.saveTurn(
      next,
      [
        { role: 'user', text: msg.message, at: now },
        { role: 'agent', text: result.response, agentName: result.agentName, traceEvents: result.traceEvents, at: now },
      ],
      existing === undefined,
    );
    this.#record = next;
    return {
      sessionId: session.id,
      response: result.response,
      traceEvents: result.traceEvents,
      agentName: result.agentName,
      usage: result.usage,
      latencyMs: Math.round((performance.now() - started) * 100) / 100,
    };
  }

  #newSession(msg: TurnMessage): SessionRecord {
    if (msg.deploymentId !== undefined) return this.#newDeploymentSession(msg, msg.deploymentId);
    if (msg.projectId === undefined) throw new ParleyError('BAD_REQUEST', 'projectId is required to start a session', { field: 'projectId' });
    const project = this.#svc.tenancy.requireProject(msg.tenantId, msg.projectId);
    const entry = chooseEntryAgent(project, this.#svc.agents, msg.agentName);
    const now = new Date().toISOString();
    return {
      id: this.#key, tenantId: msg.tenantId, projectId: project.id, status: 'active', entryAgent: entry.name,
      agentVersions: { [entry.name]: entry.version }, conversation: initialState(entry.name),
      handoffCount: 0, messageCount: 0, createdAt: now, updatedAt: now,
    };
  }

  /** A session on a deployment pins every manifest agent now ('auto' = latest at this moment). */
  #newDeploymentSession(msg: TurnMessage, deploymentId: string): SessionRecord {
    const svc = this.#svc;
    const deployment = svc.deployments.byId(msg.tenantId, deploymentId);
    if (!deployment || (msg.projectId !== undefined && deployment.projectId !== msg.projectId)) throw new ParleyError('NOT_FOUND', 'Deployment not found');
    admitNewSession(deployment);
    const entryAgent = deploymentEntryAgent(deployment, msg.agentName, svc.agents);
    const now = new Date().toISOString();
    return {
      id: this.#key, tenantId: msg.tenantId, projectId: deployment.projectId, status: 'active', entryAgent,
      agentVersions: resolveManifest(msg.tenantId, deployment.projectId, deployment.agentVersionManifest, svc.agents),
      deploymentId: deployment.id, modelOverrides: deployment.modelOverrides,
      conversation: initialState(entryAgent), handoffCount: 0, messageCount: 0, createdAt: now, updatedAt: now,
    };
  }
}

/** Runs an agent once on a task for a DELEGATE step; stateless, so any number can run in parallel. */
class DelegationActor implements Actor {
  readonly #env: ActorEnv;
  readonly #svc: ConversationServices;

  constructor(env: ActorEnv, svc: ConversationServices) {
    this.#env = env;
    this.#svc = svc;
  }

  async receive(message: unknown, ctx: MessageContext): Promise<DelegateReply> {
    const msg = message as DelegateMessage;
    const { tenantId, projectId } = msg;
    const svc = this.#svc;
    const programOf = (name: string, version: number | undefined): AgentProgram | undefined => {
      // On a deployment only its pinned versions run; elsewhere an unpinned agent runs its latest.
      const v = msg.pinned ? msg.pinned[name] : (version ?? svc.agents.get(tenantId, projectId, name)?.versionCount);
      return v ? withModelOverride(svc.programs.get(tenantId, projectId, name, v), msg.modelOverrides?.[name]) : undefined;
    };
    const program = programOf(msg.agentName, msg.version);
    if (!program) throw new ParleyError('NOT_FOUND', `Agent "${msg.agentName}" has no compiled version`);
    let n = 0;
    const host: TurnHost = {
      program: async (name) => programOf(name, undefined),
      delegate: async (name, task) => {
        if (msg.depth >= MAX_DELEGATION_DEPTH) return { ok: false as const, error: 'delegation nested too deeply' };
        const request: DelegateMessage = { type: 'delegate', tenantId, projectId, agentName: name, version: undefined, task, depth: msg.depth + 1, pinned: msg.pinned, modelOverrides: msg.modelOverrides };
        try {
          const reply = await this.#env.ask<DelegateReply>({ kind: 'delegation', key: `${ctx.self.key}/${n++}` }, request, { requestId: ctx.requestId });
          return { ok: true as const, response: reply.response };
        } catch (err) {
          return { ok: false as const, error: err instanceof ParleyError ? err.message : 'delegation failed' };
        }
      },
    };
    const { response } = await runDelegation(program, msg.task, host);
    return { response };
  }
}

/** Delegations may nest this deep (a delegate delegating...), no further. */
export const MAX_DELEGATION_DEPTH = 3;

/** Creates the session and delegation kinds sharing one set of thread services. */
export function conversationKinds(svcOf: (env: ActorEnv) => ConversationServices): { session: ActorKind; delegation: ActorKind } {
  return {
    session: { create: (key, env) => new SessionActor(key, env, svcOf(env)) },
    delegation: { create: (_key, env) => new DelegationActor(env, svcOf(env)) },
  };
}
