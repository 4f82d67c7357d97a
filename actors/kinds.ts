import type { ActorEnv, ActorKindsModule } from '../runtime/index.js';
import { agentActorKind } from './agents/agent-actor.js';
import { projectIoActorKind } from './project-io/index.js';
import { conversationKinds, conversationServices, type ConversationServices } from './session/session-actor.js';

// One set of services per thread (a worker or the main thread), made on first use.
let services: ConversationServices | undefined;
const servicesOf = (env: ActorEnv): ConversationServices => (services ??= conversationServices(env));

/** The actor kinds every worker hosts; the ActorSystem loads this module by URL. */
export const kinds: ActorKindsModule['kinds'] = {
  agent: agentActorKind,
  'project-io': projectIoActorKind,
  ...conversationKinds(servicesOf),
};
