import { ActorSystem, LmdbStore, SecretBox, persistentSecret, type Config, type Logger } from '../runtime/index.js';
import { ACTOR_KINDS_MODULE, AgentStore, CallbackStore, EventRecorder, ThreadedEventWriter, analyticsPath, openAnalyticsStore, SessionStore, TenancyStore, bootstrapIfEmpty, type BootstrapResult, type ResumeMessage } from '../actors/index.js';
import { callbackRoutes } from './routes/callback-routes.js';
import { GatewayApp, type GatewayDeps, type RouteModule } from './app.js';
import { Authenticator } from './auth.js';
import { adminRoutes } from './routes/admin-routes.js';
import { analyticsRoutes } from './routes/analytics-routes.js';
import { agentRoutes } from './routes/agent-routes.js';
import { apiKeyRoutes } from './routes/api-key-routes.js';
import { authRoutes } from './routes/auth-routes.js';
import { chatRoutes } from './routes/chat-routes.js';
import { deploymentRoutes } from './routes/deployment-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { memoryRoutes } from './routes/memory-routes.js';
import { modelSettingsRoutes } from './routes/model-settings-routes.js';
import { projectIoRoutes } from './routes/project-io-routes.js';
import { projectRoutes } from './routes/project-routes.js';
import { sessionRoutes } from './routes/session-routes.js';
import { userRoutes } from './routes/user-routes.js';
import { contactRoutes } from './routes/contact-routes.js';
import { toolSecretRoutes } from './routes/tool-secret-routes.js';
import { traceRoutes } from './routes/trace-routes.js';
import { voiceAnalyticsRoutes } from './routes/voice-analytics-routes.js';
import { listenUws, type UwsServer } from './uws-server.js';

/** Every route module of the API, in one list (the security tests walk it). */
export const ROUTE_MODULES: readonly RouteModule[] = [
  healthRoutes, authRoutes, adminRoutes, projectRoutes, apiKeyRoutes, userRoutes, agentRoutes, chatRoutes, sessionRoutes, deploymentRoutes, contactRoutes, toolSecretRoutes, projectIoRoutes, modelSettingsRoutes, memoryRoutes, analyticsRoutes, traceRoutes, voiceAnalyticsRoutes,
];

/** A running Parley: its port, the parts tests reach into, and an idempotent close. */
export interface Parley {
  readonly port: number;
  readonly app: GatewayApp;
  readonly deps: GatewayDeps;
  readonly actors: ActorSystem;
  /** Set on the very first start of an empty store. */
  readonly bootstrap: BootstrapResult | undefined;
  close(): Promise<void>;
}

/** Opens the store, bootstraps, starts the actor workers and builds the gateway app (no listener). */
export async function createParley(config: Config, log: Logger): Promise<Omit<Parley, 'port'>> {
  const store = new LmdbStore({ path: config.dataDir, durability: config.durability });
  const tenancy = new TenancyStore(store);
  const bootstrap = await bootstrapIfEmpty(tenancy, config);
  const jwtSecret = await persistentSecret(store, 'jwt', config.jwtSecret);
  const actors = await ActorSystem.start({ config, log, kindsModule: ACTOR_KINDS_MODULE, store });
  const analytics = openAnalyticsStore(config);
  const eventWriter = new ThreadedEventWriter({ path: analyticsPath(config.dataDir), durability: config.durability, retentionDays: config.analyticsRetentionDays });
  const events = new EventRecorder(eventWriter);
  const deps: GatewayDeps = {
    config, log, store, tenancy, actors, events, analytics,
    agents: new AgentStore(store),
    sessions: new SessionStore(store),
    auth: new Authenticator({ tenancy, jwtSecret, jwtTtlSeconds: config.jwtTtlSeconds, adminToken: config.adminToken }),
  };
  // Callbacks resume sessions: the route claims the id and wakes the session; at start, sessions
  // whose claimed callbacks were not run yet (the process died in between) are woken too.
  const callbacks = new CallbackStore(store, new SecretBox(config.encryptionKeys));
  const resume: ResumeMessage = { type: 'resume' };
  const wakeSession = (sessionId: string): void => actors.tell({ kind: 'session', key: sessionId }, resume);
  const app = new GatewayApp(deps, [...ROUTE_MODULES, callbackRoutes({ callbacks, wakeSession })]);
  for (const sessionId of callbacks.sessionsWithJobs()) wakeSession(sessionId);
  let closed = false;
  return {
    app, deps, actors, bootstrap,
    close: async () => {
      if (closed) return;
      closed = true;
      await actors.close();
      await events.close();
      await eventWriter.close();
      await analytics.close();
      await store.close();
    },
  };
}

/** Starts Parley on uWS at config.host:config.port (port 0 picks a free one). */
export async function startParley(config: Config, log: Logger): Promise<Parley> {
  const parts = await createParley(config, log);
  let server: UwsServer;
  try {
    server = await listenUws(parts.app, { host: config.host, port: config.port, log, accessLog: config.accessLog });
  } catch (err) {
    await parts.close();
    throw err;
  }
  return {
    ...parts,
    port: server.port,
    close: async () => {
      server.close();
      await parts.close();
    },
  };
}
