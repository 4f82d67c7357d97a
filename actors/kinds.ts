import type { ActorEnv, ActorKindsModule } from '../runtime/index.js';
import { agentActorKind } from './agents/agent-actor.js';
import type { EventSink } from './analytics/analytics-event.js';
import { projectIoActorKind } from './project-io/index.js';
import { conversationServices, type ConversationServices } from './session/conversation-services.js';
import { delegationActorKind } from './session/delegation-actor.js';
import { sessionActorKind } from './session/session-actor.js';

// One set of services per thread (a worker or the main thread), made on first use.
let services: ConversationServices | undefined;
let events: EventSink = { record: () => undefined };
const servicesOf = (env: ActorEnv): ConversationServices => (services ??= conversationServices(env, events));

/** The actor kinds every worker hosts; the ActorSystem loads this module by URL. */
export const kinds: ActorKindsModule['kinds'] = {
  agent: agentActorKind,
  'project-io': projectIoActorKind,
  session: sessionActorKind(servicesOf),
  delegation: delegationActorKind(servicesOf),
};

/** Stops this thread's tool sandbox. */
export async function close(): Promise<void> {
  await services?.tools.close();
}
