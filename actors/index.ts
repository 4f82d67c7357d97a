// Public surface of the domain layer: what the gateway and benches may use.
export * from './tenancy/permissions.js';
export type { Tenant, Project, User, ApiKey, Principal } from './tenancy/records.js';
export { TenancyStore, API_KEY_PREFIX, slugify, type CreatedApiKey } from './tenancy/tenancy-store.js';
export type { AgentRecord, AgentVersion, AgentVersionSummary } from './agents/agent-records.js';
export { AgentStore, AGENT_NAME, MAX_DSL_LENGTH, summarizeVersion } from './agents/agent-store.js';
export { agentActorKey, type AgentMessage, type CompileReply } from './agents/agent-actor.js';
export type { SessionRecord, SessionView, TranscriptEntry } from './session/session-records.js';
export { sessionView } from './session/session-records.js';
export { SessionStore } from './session/session-store.js';
export { chooseEntryAgent } from './session/entry-agent.js';
export { MAX_MESSAGE_LENGTH } from './session/session-actor.js';
export * from './deployments/index.js';
export type { TurnMessage, TurnReply, TextDeltaChunk, SessionMessage, Continuation, ResumeMessage } from './session/session-messages.js';
export type { TraceEvent, TurnStep, TurnStepKind, CompileDiagnostic } from './language/index.js';
export * from './models/index.js';

/** URL of the module that declares the actor kinds, for ActorSystem.start. */
export const ACTOR_KINDS_MODULE = new URL('./kinds.js', import.meta.url).href;
export { bootstrapIfEmpty, type BootstrapResult } from './tenancy/bootstrap.js';
export { projectIoActorKey, type ProjectIoMessage, type ProjectIoReply } from './project-io/index.js';
export type { CallbackRecord, ResumeJob } from './callbacks/callback-records.js';
export { CallbackStore, type ClaimOutcome } from './callbacks/callback-store.js';
export * from './contacts/contact-records.js';
export { ContactStore, type ContactListQuery } from './contacts/contact-store.js';
export * from './secrets/tool-secret-records.js';
export { ToolSecretStore, type NewToolSecret, type ToolSecretListQuery, type ResealReport } from './secrets/tool-secret-store.js';
export * from './tools/index.js';
export * from './analytics/index.js';
export { TraceReader, EXPORT_DEFAULT_LIMIT, EXPORT_MAX_LIMIT, type TraceEventSource } from './analytics/trace-reader.js';
export { readVoiceAnalytics } from './analytics/voice-reader.js';
export { DEFAULT_VOICE_HOURS, MAX_VOICE_HOURS, type VoiceHourlyRecord, type VoiceSummary } from './analytics/voice-analytics.js';
export { VOICE_CALL_ENDED, voiceCallEndedEvent, type VoiceCallMetrics } from './analytics/voice-call-event.js';
