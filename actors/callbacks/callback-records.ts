import type { SealedSecret } from '../../runtime/index.js';

/** A callback created when a session suspends for an ASYNC tool; claimed once, then processed. */
export interface CallbackRecord {
  id: string;
  tenantId: string;
  projectId: string;
  sessionId: string;
  agentName: string;
  toolName: string;
  /** HMAC key of x-callback-signature; sealed at rest when encryption is configured. */
  secret: SealedSecret | string | null;
  status: 'pending' | 'processed';
  createdAt: string;
  expiresAt: string;
  processedAt: string | null;
}

/** A claimed callback waiting for its session to resume; durable until the session has run it. */
export interface ResumeJob {
  callbackId: string;
  sessionId: string;
  tenantId: string;
  /** The callback body, passed unchanged to the agent. */
  payload: Record<string, unknown>;
  enqueuedAt: string;
}
