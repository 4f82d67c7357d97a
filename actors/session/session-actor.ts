import { performance } from 'node:perf_hooks';
import { ParleyError, type Actor, type ActorEnv, type ActorKind, type MessageContext } from '../../runtime/index.js';
import { initialState, resumeTurn, runTurn, type TurnInput, type TurnResult } from '../language/index.js';
import { deploymentEntryAgent } from '../deployments/chat-target.js';
import { resolveManifest } from '../deployments/manifest.js';
import { admitContinuedSession, admitNewSession } from '../deployments/session-admission.js';
import type { ConversationServices } from './conversation-services.js';
import { chooseEntryAgent } from './entry-agent.js';
import type { Continuation, ResumeReply, SessionMessage, TextDeltaChunk, TurnMessage, TurnReply } from './session-messages.js';
import type { SessionRecord } from './session-records.js';
import { turnEvents } from './turn-events.js';
import { newSpanId, turnHost, type TurnScope } from './turn-host.js';

/** Longest user message accepted, in characters. */
export const MAX_MESSAGE_LENGTH = 32_000;
/** Transcript lines given to a language model as context. */
const HISTORY_LINES = 20;

/**
 * One actor per chat session (key: the session id). It holds the session in memory between
 * turns, runs each turn of the agent program, and persists the new state and transcript before
 * it replies, so an answered turn survives a crash and a restarted actor resumes from it.
 * A turn that calls an ASYNC tool suspends; the callback's resume job continues it here.
 */
export class SessionActor implements Actor {
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

  receive(message: unknown, ctx: MessageContext): Promise<TurnReply | ResumeReply | Continuation[]> {
    const msg = message as SessionMessage;
    switch (msg.type) {
      case 'turn':
        return this.#turn(msg, ctx);
      case 'resume':
        return this.#resume(ctx);
      case 'take-continuations':
        return this.#takeContinuations(msg.tenantId);
    }
  }

  async #takeContinuations(tenantId: string): Promise<Continuation[]> {
    const session = this.#record;
    if (!session || session.tenantId !== tenantId) throw new ParleyError('NOT_FOUND', 'Session not found');
    const taken = session.undelivered ?? [];
    if (taken.length === 0) return taken;
    const next = { ...session, undelivered: [] };
    await this.#svc.sessions.saveTurn(next, [], false);
    this.#record = next;
    return taken;
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
    const scope = this.#scope(session, ctx.requestId);
    const host = turnHost(this.#env, this.#svc, scope, msg.stream ? (delta) => ctx.emit({ type: 'text_delta', delta } satisfies TextDeltaChunk) : undefined);
    const startedAt = new Date();
    let result: TurnResult;
    try {
      result = await runTurn(session.conversation, this.#input(session, msg.message, existing !== undefined), host);
    } catch (err) {
      this.#svc.events.record({
        tenantId: session.tenantId, projectId: session.projectId, category: 'system', event_type: 'turn_error', agent_name: session.conversation.currentAgent,
        session_id: session.id, channel: 'api', timestamp: startedAt.toISOString(), duration_ms: Date.now() - startedAt.getTime(),
        error: err instanceof ParleyError ? err.message : 'Unexpected internal error', span_id: scope.spanId, parent_span_id: null, metadata: {},
      });
      throw err;
    }
    const now = new Date().toISOString();
    const continuations = session.undelivered ?? [];
    const next = advance(session, scope, result, 2, [], now);
    await this.#svc.sessions.saveTurn(
      next,
      [
        { role: 'user', text: msg.message, at: now },
        { role: 'agent', text: result.response, agentName: result.agentName, traceEvents: result.traceEvents, ...(result.actions ? { actions: result.actions } : {}), at: now },
      ],
      existing === undefined,
    );
    this.#record = next;
    const latencyMs = Math.round((performance.now() - started) * 100) / 100;
    for (const e of turnEvents(session, scope.spanId, startedAt, latencyMs, result, existing === undefined)) this.#svc.events.record(e);
    return {
      sessionId: session.id,
      response: result.response,
      traceEvents: result.traceEvents,
      agentName: result.agentName,
      usage: result.usage,
      latencyMs,
      ...(result.actions ? { actions: result.actions } : {}),
      suspended: result.suspended,
      messageCount: next.messageCount,
      continuations,
    };
  }

  /** Runs every claimed callback of this session, each in its own transaction with its job's removal. */
  async #resume(ctx: MessageContext): Promise<ResumeReply> {
    let resumed = 0;
    const session = this.#record;
    if (!session) return { resumed };
    for (const job of this.#svc.callbacks.jobsFor(session.id)) {
      const current = this.#record!;
      const removeJob = (): void => this.#svc.callbacks.removeJobSync(current.id, job.callbackId);
      if (current.conversation.pending?.callbackId !== job.callbackId) {
        // Expired and already resumed with an error by a later message: nothing to continue.
        await this.#svc.sessions.saveTurn(current, [], false, removeJob);
        continue;
      }
      const scope = this.#scope(current, ctx.requestId);
      const startedAt = new Date();
      const result = await resumeTurn(current.conversation, { callbackId: job.callbackId, payload: job.payload, sessionId: current.id, contact: this.#contact(current) }, turnHost(this.#env, this.#svc, scope, undefined));
      const now = new Date().toISOString();
      const next = advance(current, scope, result, 1, [...(current.undelivered ?? []), { response: result.response, agentName: result.agentName, at: now }], now);
      const entry = { role: 'agent' as const, text: result.response, agentName: result.agentName, traceEvents: result.traceEvents, callbackId: job.callbackId, ...(result.actions ? { actions: result.actions } : {}), at: now };
      await this.#svc.sessions.saveTurn(next, [entry], false, removeJob);
      this.#record = next;
      for (const e of turnEvents(current, scope.spanId, startedAt, Date.now() - startedAt.getTime(), result, false, 'resume')) this.#svc.events.record(e);
      resumed++;
    }
    return { resumed };
  }

  #scope(session: SessionRecord, requestId: string | undefined): TurnScope {
    return {
      tenantId: session.tenantId, projectId: session.projectId, sessionId: session.id, pinned: { ...session.agentVersions },
      onDeployment: Boolean(session.deploymentId), overrides: session.modelOverrides ?? {}, environment: session.environment ?? 'dev',
      requestId, spanId: newSpanId(), depth: 0, delegationKey: `${session.id}/${session.messageCount}`,
    };
  }

  /**
   * The turn's input. History and contact are read from the store only if the turn uses them
   * (a model call, a contact template): most builtin turns need neither, and they are hot.
   */
  #input(session: SessionRecord, message: string, hasHistory: boolean): TurnInput {
    const sessions = this.#svc.sessions;
    const contactOf = (): TurnInput['contact'] => this.#contact(session);
    let history: TurnInput['history'];
    let contact: TurnInput['contact'] | null = null;
    return {
      message,
      sessionId: session.id,
      get history() {
        history ??= hasHistory ? sessions.recentTranscript(session.tenantId, session.id, HISTORY_LINES).map((e) => ({ role: e.role, text: e.text })) : [];
        return history;
      },
      get contact() {
        if (contact === null) contact = contactOf();
        return contact;
      },
    };
  }

  // The linked contact for {{contact.*}}, without the fields that are the service's, not the contact's.
  #contact(session: SessionRecord): Record<string, unknown> | undefined {
    const contact = this.#svc.contacts.contactForSession(session.tenantId, session.id);
    if (!contact) return undefined;
    const { tenantId: _tenant, ...rest } = contact as unknown as Record<string, unknown>;
    return rest;
  }

  #newSession(msg: TurnMessage): SessionRecord {
    if (msg.deploymentId !== undefined) return this.#newDeploymentSession(msg, msg.deploymentId);
    if (msg.projectId === undefined) throw new ParleyError('BAD_REQUEST', 'projectId is required to start a session', { field: 'projectId' });
    const project = this.#svc.tenancy.requireProject(msg.tenantId, msg.projectId);
    const entry = chooseEntryAgent(project, this.#svc.agents, msg.agentName);
    const now = new Date().toISOString();
    return {
      id: this.#key, tenantId: msg.tenantId, projectId: project.id, status: 'active', entryAgent: entry.name,
      agentVersions: { [entry.name]: entry.version }, environment: 'dev', conversation: initialState(entry.name),
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
      deploymentId: deployment.id, modelOverrides: deployment.modelOverrides, environment: deployment.environment,
      conversation: initialState(entryAgent), handoffCount: 0, messageCount: 0, createdAt: now, updatedAt: now,
    };
  }
}

/** The session after a turn (or continuation) that added `lines` transcript lines. */
function advance(session: SessionRecord, scope: TurnScope, result: TurnResult, lines: number, undelivered: Continuation[], now: string): SessionRecord {
  return {
    ...session,
    agentVersions: scope.pinned,
    conversation: result.state,
    handoffCount: result.state.handoffCount,
    messageCount: session.messageCount + lines,
    undelivered,
    updatedAt: now,
  };
}

/** The `session` actor kind over one thread's services. */
export function sessionActorKind(svcOf: (env: ActorEnv) => ConversationServices): ActorKind {
  return { create: (key, env) => new SessionActor(key, env, svcOf(env)) };
}
