import { ParleyError, type Actor, type ActorEnv, type ActorKind, type MessageContext } from '../../runtime/index.js';
import { runDelegation } from '../language/index.js';
import type { ConversationServices } from './conversation-services.js';
import type { DelegateMessage, DelegateReply } from './session-messages.js';
import { turnHost } from './turn-host.js';

/**
 * Runs an agent once on a task for a DELEGATE step. Stateless and keyed per call, so parallel
 * delegates land on different shards (and workers) and run concurrently.
 */
class DelegationActor implements Actor {
  readonly #env: ActorEnv;
  readonly #svc: ConversationServices;

  constructor(env: ActorEnv, svc: ConversationServices) {
    this.#env = env;
    this.#svc = svc;
  }

  async receive(message: unknown, ctx: MessageContext): Promise<DelegateReply> {
    const msg = message as DelegateMessage;
    // On a deployment only its pinned versions run; elsewhere an unpinned agent runs its latest.
    const pinned: Record<string, number> = msg.pinned ? { ...msg.pinned } : {};
    if (!msg.pinned && msg.version !== undefined) pinned[msg.agentName] = msg.version;
    // The delegate's model and tool calls are children of the delegate span its caller opened.
    const host = turnHost(this.#env, this.#svc, {
      tenantId: msg.tenantId, projectId: msg.projectId, sessionId: msg.sessionId, pinned, onDeployment: msg.pinned !== undefined,
      overrides: msg.modelOverrides ?? {}, environment: msg.environment, requestId: ctx.requestId, spanId: msg.parentSpanId,
      depth: msg.depth, delegationKey: ctx.self.key,
    }, undefined);
    const program = await host.program(msg.agentName);
    if (!program) throw new ParleyError('NOT_FOUND', `Agent "${msg.agentName}" has no compiled version`);
    const { response } = await runDelegation(program, msg.task, host);
    return { response };
  }
}

/** The `delegation` actor kind over one thread's services. */
export function delegationActorKind(svcOf: (env: ActorEnv) => ConversationServices): ActorKind {
  return { create: (_key, env) => new DelegationActor(env, svcOf(env)) };
}
