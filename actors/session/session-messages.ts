import type { TraceEvent } from '../language/index.js';
import type { ModelOverride } from '../deployments/deployment-records.js';

/** A user message for a session. `create` starts the session when it does not exist yet. */
export interface TurnMessage {
  type: 'turn';
  tenantId: string;
  /** Required when creating; when continuing, a mismatch answers NOT_FOUND. */
  projectId: string | undefined;
  create: boolean;
  /** Entry agent of a new session; ignored when continuing one. */
  agentName: string | undefined;
  message: string;
  /** Emit `text_delta` chunks while the response is produced. */
  stream: boolean;
  /**
   * New session: run it on this deployment (its manifest, entry agent and model overrides).
   * Continuing: must be the session's deployment, else NOT_FOUND.
   */
  deploymentId?: string | undefined;
}

/** Every message the session actor understands. */
export type SessionMessage = TurnMessage;

/** A streamed piece of the response. */
export interface TextDeltaChunk {
  type: 'text_delta';
  delta: string;
}

/** The reply to a turn: the spec's chat response plus what the stream's usage/complete events need. */
export interface TurnReply {
  sessionId: string;
  response: string;
  traceEvents: TraceEvent[];
  agentName: string;
  usage: { inputTokens: number; outputTokens: number };
  latencyMs: number;
}

/** A request to run an agent once on a task (DELEGATE). */
export interface DelegateMessage {
  type: 'delegate';
  tenantId: string;
  projectId: string;
  agentName: string;
  /** Pinned version; the latest when undefined. */
  version: number | undefined;
  /** A deployment session's pinned versions: the delegate and its own delegates may use only these. */
  pinned?: Record<string, number> | undefined;
  /** A deployment session's per-agent model overrides. */
  modelOverrides?: Record<string, ModelOverride> | undefined;
  task: string;
  /** Nesting depth, to stop delegation chains. */
  depth: number;
}

/** Reply of a delegation. */
export interface DelegateReply {
  response: string;
}
