import type { ActionSet, ConversationState, TraceEvent } from '../language/index.js';
import type { Continuation } from './session-messages.js';
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
  /** Environment whose tool secrets the session's tools read (the deployment's, else dev). */
  environment?: string;
  conversation: ConversationState;
  handoffCount: number;
  messageCount: number;
  /** Continuations of suspended turns not yet delivered in a chat reply. */
  undelivered?: Continuation[];
  createdAt: string;
  updatedAt: string;
}

/** One line of a session's transcript. */
export interface TranscriptEntry {
  role: 'user' | 'agent';
  text: string;
  agentName?: string;
  traceEvents?: TraceEvent[];
  /** ACTION_SET of this answer (buttons, selects, text inputs). */
  actions?: ActionSet;
  /** Set on an answer produced by a callback (the continuation of a suspended turn). */
  callbackId?: string;
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
  /** True while the session waits for an ASYNC tool's callback. */
  suspended: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Shapes a stored session for the API. */
export function sessionView(s: SessionRecord): SessionView {
  return {
    sessionId: s.id, projectId: s.projectId, status: s.status, entryAgent: s.entryAgent,
    currentAgent: s.conversation.currentAgent, agentVersions: s.agentVersions,
    deploymentId: s.deploymentId ?? null, modelOverrides: s.modelOverrides ?? {}, handoffCount: s.handoffCount,
    messageCount: s.messageCount, suspended: s.conversation.pending?.callbackId !== undefined, createdAt: s.createdAt, updatedAt: s.updatedAt,
  };
}
