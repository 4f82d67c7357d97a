import { randomToken, type Collection, type SecretBox, type Store } from '../../runtime/index.js';
import type { CallbackRecord, ResumeJob } from './callback-records.js';

/** Outcome of claiming a callback id. */
export type ClaimOutcome = 'claimed' | 'already_processed' | 'expired' | 'missing';

/**
 * Callbacks keyed [callbackId] (the id is an unguessable token and the only thing a caller has),
 * and resume jobs keyed [sessionId, callbackId] so a session finds its own. Claiming flips the
 * status and writes the job in one transaction: a callback runs at most once, and a claimed one
 * is never lost, even if the process dies before the session resumes.
 */
export class CallbackStore {
  readonly #store: Store;
  readonly #box: SecretBox;
  readonly #callbacks: Collection<CallbackRecord>;
  readonly #jobs: Collection<ResumeJob>;

  constructor(store: Store, box: SecretBox) {
    this.#store = store;
    this.#box = box;
    this.#callbacks = store.collection('callbacks');
    this.#jobs = store.collection('resumeJobs');
  }

  /**
   * Creates a pending callback. `secret` is the HMAC key the external system signs its call with
   * (the tool's `callback_secret` tool secret, known to both sides beforehand); null: unsigned.
   */
  async create(input: { tenantId: string; projectId: string; sessionId: string; agentName: string; toolName: string; ttlMs: number; secret: string | null }): Promise<CallbackRecord> {
    const id = `cb_${randomToken(24)}`;
    const secret = input.secret;
    const now = Date.now();
    const record: CallbackRecord = {
      id, tenantId: input.tenantId, projectId: input.projectId, sessionId: input.sessionId, agentName: input.agentName, toolName: input.toolName,
      secret: secret === null ? null : this.#box.configured ? this.#box.seal(secret, `callback:${id}`) : secret,
      status: 'pending', createdAt: new Date(now).toISOString(), expiresAt: new Date(now + input.ttlMs).toISOString(), processedAt: null,
    };
    await this.#callbacks.put([id], record);
    return record;
  }

  /** The callback, or undefined. */
  get(id: string): CallbackRecord | undefined {
    return this.#callbacks.get([id]);
  }

  /** The HMAC secret of a callback, or null when it has none. */
  secretOf(record: CallbackRecord): string | null {
    if (record.secret === null) return null;
    return typeof record.secret === 'string' ? record.secret : this.#box.open(record.secret, `callback:${record.id}`);
  }

  /** Claims a pending, unexpired callback and enqueues its resume job atomically. */
  async claim(id: string, payload: Record<string, unknown>, now = new Date()): Promise<{ outcome: ClaimOutcome; record?: CallbackRecord }> {
    return this.#store.transaction(() => {
      const record = this.#callbacks.get([id]);
      if (!record) return { outcome: 'missing' as const };
      if (record.status === 'processed') return { outcome: 'already_processed' as const, record };
      if (Date.parse(record.expiresAt) <= now.getTime()) return { outcome: 'expired' as const, record };
      const claimed: CallbackRecord = { ...record, status: 'processed', processedAt: now.toISOString() };
      this.#callbacks.putSync([id], claimed);
      this.#jobs.putSync([record.sessionId, id], { callbackId: id, sessionId: record.sessionId, tenantId: record.tenantId, payload, enqueuedAt: now.toISOString() });
      return { outcome: 'claimed' as const, record: claimed };
    });
  }

  /** Resume jobs of one session, oldest first. */
  jobsFor(sessionId: string): ResumeJob[] {
    return this.#jobs.range({ prefix: [sessionId] }).map((e) => e.value).sort((a, b) => a.enqueuedAt.localeCompare(b.enqueuedAt));
  }

  /** Sessions that have resume jobs waiting (to dispatch them after a restart). */
  sessionsWithJobs(limit = 10_000): string[] {
    const ids = new Set<string>();
    for (const { value } of this.#jobs.range({ prefix: [], limit })) ids.add(value.sessionId);
    return [...ids];
  }

  /** Inside a Store transaction: removes a job once the session has run it. */
  removeJobSync(sessionId: string, callbackId: string): void {
    this.#jobs.removeSync([sessionId, callbackId]);
  }
}
