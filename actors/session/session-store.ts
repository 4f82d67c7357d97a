import { ParleyError, type Collection, type Store } from '../../runtime/index.js';
import type { SessionRecord, TranscriptEntry } from './session-records.js';

/**
 * Sessions keyed [tenantId, projectId, sessionId] (so a project's sessions are one range), an
 * index [sessionId] -> owner for the actor that only knows its key, and transcripts keyed
 * [tenantId, sessionId, seq].
 */
export class SessionStore {
  readonly #store: Store;
  readonly #sessions: Collection<SessionRecord>;
  readonly #owners: Collection<{ tenantId: string; projectId: string }>;
  readonly #transcripts: Collection<TranscriptEntry>;

  constructor(store: Store) {
    this.#store = store;
    this.#sessions = store.collection('sessions');
    this.#owners = store.collection('sessionOwners');
    this.#transcripts = store.collection('transcripts');
  }

  /** The session by id alone (the actor's view); callers check the tenant. */
  byId(sessionId: string): SessionRecord | undefined {
    const owner = this.#owners.get([sessionId]);
    return owner ? this.#sessions.get([owner.tenantId, owner.projectId, sessionId]) : undefined;
  }

  /** Who owns a session id (a small index read: no session state is decoded). */
  owner(sessionId: string): { tenantId: string; projectId: string } | undefined {
    return this.#owners.get([sessionId]);
  }

  /** The tenant's session in a project, or undefined. */
  get(tenantId: string, projectId: string, sessionId: string): SessionRecord | undefined {
    return this.#sessions.get([tenantId, projectId, sessionId]);
  }

  /** The tenant's session in a project, or NOT_FOUND (the same for missing and foreign ids). */
  require(tenantId: string, projectId: string, sessionId: string): SessionRecord {
    const session = this.get(tenantId, projectId, sessionId);
    if (!session) throw new ParleyError('NOT_FOUND', 'Session not found');
    return session;
  }

  /** A page of a project's sessions (ids are time-ordered CUIDs, so newest first is a reverse scan). */
  list(tenantId: string, projectId: string, limit: number, offset: number): { sessions: SessionRecord[]; total: number } {
    const sessions = this.#sessions.range({ prefix: [tenantId, projectId], reverse: true, limit, offset }).map((e) => e.value);
    return { sessions, total: this.#sessions.count([tenantId, projectId]) };
  }

  /**
   * Writes the session and appends transcript lines in one transaction; resolves when durable.
   * `alsoInTransaction` adds writes of other stores (e.g. removing a resume job) to the same commit.
   */
  async saveTurn(session: SessionRecord, entries: TranscriptEntry[], isNew: boolean, alsoInTransaction?: () => void): Promise<void> {
    await this.#store.transaction(() => {
      alsoInTransaction?.();
      if (isNew) this.#owners.putSync([session.id], { tenantId: session.tenantId, projectId: session.projectId });
      this.#sessions.putSync([session.tenantId, session.projectId, session.id], session);
      let seq = session.messageCount - entries.length;
      for (const entry of entries) this.#transcripts.putSync([session.tenantId, session.id, seq++], entry);
    });
  }

  /** The last `count` transcript lines, oldest first (the context a language model gets). */
  recentTranscript(tenantId: string, sessionId: string, count: number): TranscriptEntry[] {
    return this.#transcripts.range({ prefix: [tenantId, sessionId], reverse: true, limit: count }).map((e) => e.value).reverse();
  }

  /** Transcript lines from position `from` on (lines are numbered from 0 in order). */
  transcriptFrom(tenantId: string, sessionId: string, from: number): TranscriptEntry[] {
    return this.#transcripts.range({ prefix: [tenantId, sessionId] }).filter((e) => (e.key[2] as number) >= from).map((e) => e.value);
  }

  /** The session's transcript, oldest first. */
  transcript(tenantId: string, sessionId: string, limit = 200): TranscriptEntry[] {
    return this.#transcripts.range({ prefix: [tenantId, sessionId], limit }).map((e) => e.value);
  }
}
