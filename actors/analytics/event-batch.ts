/**
 * A write batch made ready for the store: rows cut into blocks already in the store's encoding,
 * the session index entries and the rollup changes. Encoding happens once, on the thread that
 * recorded the events (or the one that writes to the EventStore directly); the thread that writes only
 * puts bytes and merges rollups, so neither encodes twice and the write lock is held briefly.
 * Plain data: an EncodedBatch can be posted to another thread as it is.
 */
import { prepareValue, type Prepared } from '../../runtime/index.js';
import { compareRows, cutBlocks, type BlockKey, type BlockValue } from './event-blocks.js';
import type { EventRow } from './event-codec.js';
import { RollupDelta, type RollupChanges } from './rollups.js';

/** One block ready to put, with its sessions' positions. */
export interface EncodedBlock {
  key: BlockKey;
  value: Prepared<BlockValue>;
  sessions: [string, number[]][];
}

/** A batch ready to put (see the file comment). */
export interface EncodedBatch extends RollupChanges {
  blocks: EncodedBlock[];
  projects: [string, string][];
}

/** Groups rows by project, sorts them, cuts and encodes blocks and sums their rollups. */
export function encodeBatch(rows: readonly EventRow[]): EncodedBatch {
  const encoder = new BatchEncoder();
  encoder.add(rows);
  return encoder.take();
}

/**
 * Encodes rows as they arrive and keeps one rollup delta for all of them, so that many small
 * batches become one transaction whose rollups are merged once (the writer thread's way).
 */
export class BatchEncoder {
  #delta = new RollupDelta();
  #blocks: EncodedBlock[] = [];
  #projects = new Map<string, [string, string]>();
  #events = 0;

  /** Events added since the last take(). */
  get events(): number {
    return this.#events;
  }

  /** Encodes rows into blocks now and adds them to the pending rollups. */
  add(rows: readonly EventRow[]): void {
    const byProject = new Map<string, EventRow[]>();
    // Rows come in runs of one project: look the group up only when the project changes.
    let group: EventRow[] | undefined;
    let tenantId = '';
    let projectId = '';
    for (const row of rows) {
      this.#delta.addEvent(row[0], row[1], row[2], row[3]);
      if (!group || row[0] !== tenantId || row[1] !== projectId) {
        tenantId = row[0];
        projectId = row[1];
        const pid = `${tenantId}\u0000${projectId}`;
        group = byProject.get(pid);
        if (!group) {
          byProject.set(pid, (group = []));
          this.#projects.set(pid, [tenantId, projectId]);
        }
      }
      group.push(row);
    }
    for (const g of byProject.values()) {
      if (!isSorted(g)) g.sort(compareRows);
      for (const b of cutBlocks(g[0]![0], g[0]![1], g)) this.#blocks.push({ key: b.key, value: prepareValue(b.value), sessions: [...b.sessions] });
    }
    this.#events += rows.length;
  }

  /** Everything added since the last take(), as one batch; starts afresh. */
  take(): EncodedBatch {
    const batch: EncodedBatch = { blocks: this.#blocks, rollups: this.#delta.rollups, counts: this.#delta.counts, projects: [...this.#projects.values()] };
    this.#delta = new RollupDelta();
    this.#blocks = [];
    this.#projects = new Map();
    this.#events = 0;
    return batch;
  }
}

// Recorded rows are nearly always in order already; checking is cheaper than sorting.
function isSorted(rows: readonly EventRow[]): boolean {
  for (let i = 1; i < rows.length; i++) if (compareRows(rows[i - 1]!, rows[i]!) > 0) return false;
  return true;
}
