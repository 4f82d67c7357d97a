import type { ActorEnv, ActorKindsModule } from '../runtime/index.js';
import { agentActorKind } from './agents/agent-actor.js';
import { EventRecorder } from './analytics/event-recorder.js';
import { EventStore } from './analytics/event-store.js';
import { projectIoActorKind } from './project-io/index.js';
import { conversationServices, type ConversationServices } from './session/conversation-services.js';
import { delegationActorKind } from './session/delegation-actor.js';
import { sessionActorKind } from './session/session-actor.js';

// One set of services per thread (a worker or the main thread), made on first use; analytics
// events of the thread's actors are batched by one recorder and written off the turn's path.
let services: ConversationServices | undefined;
let recorder: EventRecorder | undefined;
const servicesOf = (env: ActorEnv): ConversationServices =>
  (services ??= conversationServices(env, (recorder = new EventRecorder(new EventStore(env.store, { retentionDays: env.config.analyticsRetentionDays })))));

/** The actor kinds every worker hosts; the ActorSystem loads this module by URL. */
export const kinds: ActorKindsModule['kinds'] = {
  agent: agentActorKind,
  'project-io': projectIoActorKind,
  session: sessionActorKind(servicesOf),
  delegation: delegationActorKind(servicesOf),
};

/** Flushes this thread's analytics and stops its tool sandbox. */
export async function close(): Promise<void> {
  await recorder?.close();
  await services?.tools.close();
}
