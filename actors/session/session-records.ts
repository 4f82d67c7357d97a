import type { ConversationState, TraceEvent } from '../language/index.js';
import type { ModelOverride } from '../deployments/deployment-records.js';

/** A chat session as stored; the session actor is its only writer. */
export interface SessionRecord {
  id: string;
  tenantId: string;
  projectId: string;
  status: 'active';
  entryAgent: string;
  /** Agent versions this session runs, pinned at first use so a session never changes version mid-way. */
  agentVersions: Record<string, number>;
  /** The deployment the session runs on (absent on sessions from before deployments, and null without one). */
  deploymentId?: string | null;
  /** The deployment's per-agent model overrides, copied at session start. */
  modelOverrides?: Record<string, ModelOverride>;
  conversation: ConversationState;
  handoffCount: number;
  messageCount: number;
  createdAt: string;
  updatedAt: string;
}

/** One line of a session's transcript. */
export interface TranscriptEntry {
  role: 'user' | 'agent';
  text: string;
  agentName?: string;
  traceEvents?: TraceEvent[];
  at: string;
}

/** The API form of a session. */
export interface SessionView {
  sessionId: string;
  projectId: string;
  status: string;
  entryAgent: string;
  currentAgent: string;
  agentVersions: Record<string, number>;
  deploymentId: string | null;
  modelOverrides: Record<string, ModelOverride>;
  handoffCount: number;
  messageCount: number;
  createdAt: string;
  updatedAt: string;
}

/** Shapes a stored session for the API. */
export function sessionView(s: SessionRecord): SessionView {
  return {
    sessionId: s.id, projectId: s.projectId, status: s.status, entryAgent: s.entryAgent,
    currentAgent: s.conversation.currentAgent, agentVersions: s.agentVersions,
    deploymentId: s.deploymentId ?? null, modelOverrides: s.modelOverrides ?? {}, handoffCount: s.handoffCount,
    messageCount: s.messageCount, createdAt: s.createdAt, updatedAt: s.updatedAt,
  };
}
