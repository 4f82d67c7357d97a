import type { Actor, ActorEnv, ActorKind } from '../../runtime/index.js';
import { AgentStore, summarizeVersion } from './agent-store.js';
import type { AgentVersionSummary } from './agent-records.js';

/** Messages of the agent actor (key: `${tenantId}/${projectId}/${agentName}`). */
export type AgentMessage = { type: 'compile'; tenantId: string; projectId: string; agentName: string; createdBy: string | null };

/** Reply to a compile. */
export type CompileReply = AgentVersionSummary;

/** The agent actor's address for an agent. */
export function agentActorKey(tenantId: string, projectId: string, agentName: string): string {
  return `${tenantId}/${projectId}/${agentName}`;
}

/**
 * One actor per agent: compiling happens here, off the gateway thread, and one compile at a
 * time per agent keeps version numbers dense.
 */
class AgentActor implements Actor {
  readonly #agents: AgentStore;
  constructor(env: ActorEnv) {
    this.#agents = new AgentStore(env.store);
  }

  async receive(message: unknown): Promise<CompileReply> {
    const msg = message as AgentMessage;
    switch (msg.type) {
      case 'compile': {
        const version = await this.#agents.compile(msg.tenantId, msg.projectId, msg.agentName, msg.createdBy);
        return summarizeVersion(version);
      }
    }
  }
}

/** The `agent` actor kind. */
export const agentActorKind: ActorKind = {
  create: (_key, env) => new AgentActor(env),
};
