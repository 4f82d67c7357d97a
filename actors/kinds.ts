import type { ActorEnv, ActorKindsModule, Store } from '../runtime/index.js';
import { agentActorKind } from './agents/agent-actor.js';
import { openAnalyticsStore } from './analytics/analytics-store.js';
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
let analytics: Store | undefined;
const servicesOf = (env: ActorEnv): ConversationServices => {
  if (services) return services;
  analytics = openAnalyticsStore(env.config);
  recorder = new EventRecorder(new EventStore(analytics, { retentionDays: env.config.analyticsRetentionDays }));
  return (services = conversationServices(env, recorder));
};

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
  await analytics?.close();
  await services?.tools.close();
}
