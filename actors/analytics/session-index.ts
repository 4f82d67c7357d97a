/**
 * Which blocks hold a session's events. An entry per session per block, keyed by session, would
 * be a random B-tree insert per turn: at tens of thousands of events a second, that dirtied a page
 * per insert and was the largest cost of recording. Instead the index is written in two steps:
 *
 *  - With each block, one **posting** under the block's own key (so it appends, like the block):
 *    the sessions in the block and their positions. `analytics-postings`.
 *  - Once a minute window has closed, compact() folds its postings into one **window entry** per
 *    session, [tenantId, projectId, sessionId, windowStart] → the block references, and deletes
 *    them. `analytics-session-windows`. A session with a turn every few seconds costs one insert
 *    a minute instead of one a turn.
 *
 * A lookup reads the session's window entries and the postings not compacted yet (the last
 * minute or two; all of them where nothing compacts, which is correct, only slower). Postings that
 * arrive for a window already compacted (late events) are merged into its entry on the next pass.
 */
import type { Collection, Key, Store } from '../../runtime/index.js';
import type { BlockKey } from './event-blocks.js';

/** Window of the session index entries. */
export const SESSION_WINDOW_MS = 60_000;
/** A window is compacted this long after it closed (blocks of its last second may still be in flight). */
const COMPACT_GRACE_MS = 5000;

/** [sessionId, positions in the block][]. */
type Posting = [string, number[]][];
/** [lastTs, firstTs, count, blockId, positions]. */
type BlockRef = [number, number, number, string, number[]];

/** The start of the window a block belongs to (by its last timestamp). */
export function windowOf(lastTs: number): number {
  return Math.floor(lastTs / SESSION_WINDOW_MS) * SESSION_WINDOW_MS;
}

/** The session index over the blocks of an EventStore (see the file comment). */
export class SessionIndex {
  readonly #store: Store;
  readonly #postings: Collection<Posting>;
  readonly #windows: Collection<BlockRef[]>;

  constructor(store: Store) {
    this.#store = store;
    this.#postings = store.collection('analytics-postings');
    this.#windows = store.collection('analytics-session-windows');
  }

  /** Inside a transaction: the posting of a new block. */
  addBlock(block: BlockKey, sessions: readonly [string, number[]][]): void {
    if (sessions.length > 0) this.#postings.putSync(block, sessions as Posting);
  }

  /** Inside a transaction: forgets a deleted block (its posting, or its sessions' window entries). */
  removeBlock(block: BlockKey, sessions: Iterable<string>): void {
    if (this.#postings.removeSync(block)) return;
    // Compacted: the sweep deletes whole windows, so every entry of this block's window goes.
    const window = windowOf(block[2]);
    for (const session of sessions) this.#windows.removeSync([block[0], block[1], session, window]);
  }

  /** The blocks holding a session's events, with the positions of its events in each. */
  blocksOf(tenantId: string, projectId: string, sessionId: string): { key: BlockKey; positions: number[] }[] {
    const found = new Map<string, { key: BlockKey; positions: number[] }>();
    for (const { value } of this.#windows.range({ prefix: [tenantId, projectId, sessionId] })) {
      for (const [lastTs, firstTs, count, blockId, positions] of value) found.set(blockId, { key: [tenantId, projectId, lastTs, firstTs, count, blockId], positions });
    }
    for (const { key, value } of this.#postings.range({ prefix: [tenantId, projectId] })) {
      const hit = value.find(([session]) => session === sessionId);
      if (hit) found.set(key[5] as string, { key: key as BlockKey, positions: hit[1] });
    }
    return [...found.values()];
  }

  /**
   * Folds the postings of every closed window into window entries, one transaction per window
   * (so each session's entry of a window is written once). Returns how many postings were folded.
   */
  async compact(projects: Iterable<readonly [string, string]>, nowMs = Date.now()): Promise<number> {
    const closedBefore = windowOf(nowMs - COMPACT_GRACE_MS);
    let folded = 0;
    for (const [tenantId, projectId] of projects) {
      for (;;) {
        if (!this.#store.isOpen) return folded;
        // Read and fold in one transaction, so two compacting threads never fold a posting twice.
        const n = await this.#store.transaction(() => this.#foldOldestWindow(tenantId, projectId, closedBefore));
        if (n === 0) break;
        folded += n;
      }
    }
    return folded;
  }

  #foldOldestWindow(tenantId: string, projectId: string, closedBefore: number): number {
    const [first] = this.#postings.keys({ prefix: [tenantId, projectId], end: [tenantId, projectId, closedBefore], limit: 1 });
    if (!first) return 0;
    const windowEnd = Math.min(closedBefore, windowOf(first[2] as number) + SESSION_WINDOW_MS);
    const postings = this.#postings.range({ prefix: [tenantId, projectId], end: [tenantId, projectId, windowEnd] });
    const entries = new Map<string, { key: Key; refs: BlockRef[] }>();
    for (const { key, value } of postings) {
      const [, , lastTs, firstTs, count, blockId] = key as BlockKey;
      const window = windowOf(lastTs);
      for (const [session, positions] of value) {
        const id = `${session}\u0000${window}`;
        let entry = entries.get(id);
        if (!entry) entries.set(id, (entry = { key: [tenantId, projectId, session, window], refs: [] }));
        entry.refs.push([lastTs, firstTs, count, blockId, positions]);
      }
      this.#postings.removeSync(key);
    }
    for (const { key, refs } of entries.values()) {
      const old = this.#windows.get(key);
      this.#windows.putSync(key, old ? [...old, ...refs] : refs);
    }
    return postings.length;
  }
}
