import { ParleyError } from '../../runtime/index.js';
import type { Deployment } from './deployment-records.js';

/** Refuses a new session on a retired deployment (409 CONFLICT, docs/deployments.md). */
export function admitNewSession(deployment: Deployment): void {
  if (deployment.status === 'retired') {
    throw new ParleyError('CONFLICT', `Deployment ${deployment.id} was retired at ${deployment.retiredAt}: it accepts no new sessions; use the active deployment of ${deployment.environment}`, {
      deploymentId: deployment.id, status: deployment.status,
    });
  }
}

/**
 * A session on a retired deployment drains: it may go on while it is not idle, that is while its
 * last message is at most `idleMs` old. Once idle it is over (409 CONFLICT); start a new session.
 */
export function admitContinuedSession(deployment: Deployment, lastMessageAt: string, now: number, idleMs: number): void {
  if (deployment.status !== 'retired') return;
  if (now - Date.parse(lastMessageAt) > idleMs) {
    throw new ParleyError('CONFLICT', `This session went idle after its deployment ${deployment.id} was retired: start a new session`, {
      deploymentId: deployment.id, status: deployment.status,
    });
  }
}
