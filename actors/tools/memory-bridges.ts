import type { SessionRecord } from '../session/session-records.js';

/** What the bridge check needs of the session store. */
export interface SessionLookup {
  byId(sessionId: string): SessionRecord | undefined;
}

/**
 * Decides whether a session has an active memory bridge. A bridge is active while the session
 * exists, belongs to the token's tenant (and project), and has not ended (status 'active'), or
 * while a CODE call of that session runs on this thread: a brand-new session is saved only
 * after its first turn, yet its tools may already use ctx.memory during that turn.
 */
export class MemoryBridges {
  readonly #sessions: SessionLookup;
  // sessionId → number of CODE calls running (several tools may run at once).
  readonly #open = new Map<string, { tenantId: string; projectId: string; calls: number }>();

  constructor(sessions: SessionLookup) {
    this.#sessions = sessions;
  }

  /** Opens a bridge for the duration of a CODE call; call the returned function when it ends. */
  open(scope: { tenantId: string; projectId: string; sessionId: string }): () => void {
    const entry = this.#open.get(scope.sessionId) ?? { tenantId: scope.tenantId, projectId: scope.projectId, calls: 0 };
    entry.calls++;
    this.#open.set(scope.sessionId, entry);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--entry.calls === 0) this.#open.delete(scope.sessionId);
    };
  }

  /** True when the session has an active bridge for this tenant (and project, when given). */
  isActive(tenantId: string, projectId: string | undefined, sessionId: string): boolean {
    const open = this.#open.get(sessionId);
    if (open) return open.tenantId === tenantId && (projectId === undefined || open.projectId === projectId);
    const session = this.#sessions.byId(sessionId);
    if (!session || session.tenantId !== tenantId || session.status !== 'active') return false;
    return projectId === undefined || session.projectId === projectId;
  }
}
