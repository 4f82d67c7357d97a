import type { ActionSet, TraceEvent } from '../language/index.js';
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

/** Runs the session's claimed callbacks (sent by the callback route and at start-up). */
export interface ResumeMessage {
  type: 'resume';
}

/** Hands over (and forgets) the continuations not delivered yet: a waiting stream polls with it. */
export interface TakeContinuationsMessage {
  type: 'take-continuations';
  tenantId: string;
}

/** Every message the session actor understands. */
export type SessionMessage = TurnMessage | ResumeMessage | TakeContinuationsMessage;

/** A continuation produced by a callback while nobody was waiting; delivered with the next reply. */
export interface Continuation {
  response: string;
  agentName: string;
  at: string;
}

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
  /** Present when an ACTION_SET ran (buttons, selects, text inputs). */
  actions?: ActionSet;
  /** True when the turn waits for an ASYNC tool's callback. */
  suspended: boolean;
  /** Transcript length after this turn (a stream waits for lines after it). */
  messageCount: number;
  /** Continuations of earlier suspended turns that were not delivered yet. */
  continuations: Continuation[];
}

/** Reply to a resume message. */
export interface ResumeReply {
  resumed: number;
}

/** A request to run an agent once on a task (DELEGATE). */
export interface DelegateMessage {
  type: 'delegate';
  tenantId: string;
  projectId: string;
  /** The session the delegation works for (memory of CODE tools, analytics). */
  sessionId: string;
  /** Environment whose tool secrets the delegate's tools read. */
  environment: string;
  /** Span of the delegating turn. */
  parentSpanId: string;
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
