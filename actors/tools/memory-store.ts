import { ParleyError, type Collection, type Store } from '../../runtime/index.js';

/** Longest memoryStoreName, in characters. */
export const MAX_MEMORY_NAME_LENGTH = 128;
/** Largest stored content, as JSON, in characters. */
export const MAX_MEMORY_CONTENT_CHARS = 64 * 1024;
/** Most memory stores one session may hold. */
export const MAX_MEMORY_STORES_PER_SESSION = 100;

interface MemoryRecord {
  content: unknown;
  updatedAt: string;
}

/**
 * Per-session memory of sandboxed code, keyed [tenantId, sessionId, memoryStoreName]: a value
 * set in one turn is there in the next turn of the same session, and in no other session.
 */
export class MemoryStore {
  readonly #store: Store;
  readonly #memory: Collection<MemoryRecord>;

  constructor(store: Store) {
    this.#store = store;
    this.#memory = store.collection('toolMemory');
  }

  /** The content of a store, or undefined when it was never set (or was deleted). */
  get(tenantId: string, sessionId: string, name: string): unknown {
    return this.#memory.get([tenantId, sessionId, name])?.content;
  }

  /** Sets a store's content; PAYLOAD_TOO_LARGE past the size or per-session count limit. */
  async set(tenantId: string, sessionId: string, name: string, content: unknown): Promise<void> {
    const json = JSON.stringify(content);
    if (json === undefined) throw new ParleyError('VALIDATION_ERROR', 'payload.content must be a JSON value', { field: 'payload.content' });
    if (json.length > MAX_MEMORY_CONTENT_CHARS) {
      throw new ParleyError('PAYLOAD_TOO_LARGE', `payload.content is larger than ${MAX_MEMORY_CONTENT_CHARS} characters of JSON`, { field: 'payload.content', limit: MAX_MEMORY_CONTENT_CHARS });
    }
    const key = [tenantId, sessionId, name];
    const record: MemoryRecord = { content, updatedAt: new Date().toISOString() };
    // The count check and the write are one transaction, so racing sets cannot pass the limit.
    const written = await this.#store.transaction(() => {
      if (this.#memory.get(key) === undefined && this.#memory.count([tenantId, sessionId]) >= MAX_MEMORY_STORES_PER_SESSION) return false;
      this.#memory.putSync(key, record);
      return true;
    });
    if (!written) throw new ParleyError('PAYLOAD_TOO_LARGE', `A session may hold at most ${MAX_MEMORY_STORES_PER_SESSION} memory stores`, { limit: MAX_MEMORY_STORES_PER_SESSION });
  }

  /** Deletes a store; true when it existed. */
  delete(tenantId: string, sessionId: string, name: string): Promise<boolean> {
    // Checked inside the transaction: lmdb-js's async remove resolves true even for a missing key.
    const key = [tenantId, sessionId, name];
    return this.#store.transaction(() => {
      if (this.#memory.get(key) === undefined) return false;
      this.#memory.removeSync(key);
      return true;
    });
  }

  /** Deletes every store of a session (for whoever deletes sessions); resolves with how many. */
  async deleteSession(tenantId: string, sessionId: string): Promise<number> {
    return this.#store.transaction(() => {
      const entries = this.#memory.range({ prefix: [tenantId, sessionId] });
      for (const e of entries) this.#memory.removeSync(e.key);
      return entries.length;
    });
  }
}
