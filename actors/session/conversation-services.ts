import { SecretBox, type ActorEnv } from '../../runtime/index.js';
import { AgentStore } from '../agents/agent-store.js';
import { ProgramCache } from '../agents/program-cache.js';
import type { EventSink } from '../analytics/analytics-event.js';
import { CallbackStore } from '../callbacks/callback-store.js';
import { ContactStore } from '../contacts/contact-store.js';
import { DeploymentStore } from '../deployments/deployment-store.js';
import { ModelRouter } from '../models/model-router.js';
import { ModelSettingsStore } from '../models/model-settings-store.js';
import { ToolSecretStore } from '../secrets/tool-secret-store.js';
import { TenancyStore } from '../tenancy/tenancy-store.js';
import { ToolExecutor } from '../tools/tool-executor.js';
import { SessionStore } from './session-store.js';

/** Thread-wide services of the session and delegation actors, created once per thread. */
export interface ConversationServices {
  tenancy: TenancyStore;
  agents: AgentStore;
  sessions: SessionStore;
  programs: ProgramCache;
  deployments: DeploymentStore;
  contacts: ContactStore;
  toolSecrets: ToolSecretStore;
  callbacks: CallbackStore;
  models: ModelRouter;
  tools: ToolExecutor;
  events: EventSink;
}

/** Builds the per-thread services the conversation actors share; `events` receives analytics. */
export function conversationServices(env: ActorEnv, events: EventSink): ConversationServices {
  const box = new SecretBox(env.config.encryptionKeys);
  const agents = new AgentStore(env.store);
  const sessions = new SessionStore(env.store);
  return {
    tenancy: new TenancyStore(env.store),
    agents,
    sessions,
    programs: new ProgramCache(agents),
    deployments: DeploymentStore.of(env.store),
    contacts: new ContactStore(env.store),
    toolSecrets: new ToolSecretStore(env.store, box),
    callbacks: new CallbackStore(env.store, box),
    models: new ModelRouter({ settings: new ModelSettingsStore(env.store, box), log: env.log }),
    tools: ToolExecutor.create({ store: env.store, config: env.config, log: env.log, sessions }),
    events,
  };
}
