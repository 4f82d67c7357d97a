/**
 * Placement: a key hashes to a shard, a shard has an owner. Owners are values of a union so a
 * remote node can become an owner later (a `{ type: 'node', nodeId }` member) without changing
 * the callers that ask "who owns this shard?".
 */

/** A worker thread of this process. */
export interface WorkerOwner {
  readonly type: 'worker';
  readonly index: number;
}

/** Whoever hosts a shard's actors. Only local workers exist today; the cluster layer adds nodes. */
export type ShardOwner = WorkerOwner;

const workerOwners: WorkerOwner[] = [];

/** The (interned) owner value of worker `index`, so owners compare with ===. */
export function workerOwner(index: number): WorkerOwner {
  let owner = workerOwners[index];
  if (owner === undefined) {
    owner = Object.freeze({ type: 'worker', index }) as WorkerOwner;
    workerOwners[index] = owner;
  }
  return owner;
}

/**
 * 32-bit FNV-1a over the key's UTF-8 bytes, written without allocating: it runs on every message.
 * UTF-8 (not UTF-16 units) so that another language can compute the same placement.
 */
export function fnv1a32(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    let c = key.charCodeAt(i);
    if (c < 0x80) {
      h = Math.imul(h ^ c, 0x01000193);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      // A valid pair is one code point; a lone surrogate hashes as U+FFFD, as Buffer.from does.
      const low = c <= 0xdbff && i + 1 < key.length ? key.charCodeAt(i + 1) : 0;
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      } else {
        c = 0xfffd;
      }
    }
    if (c < 0x800) {
      h = Math.imul(h ^ (0xc0 | (c >> 6)), 0x01000193);
    } else if (c < 0x10000) {
      h = Math.imul(h ^ (0xe0 | (c >> 12)), 0x01000193);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 0x3f)), 0x01000193);
    } else {
      h = Math.imul(h ^ (0xf0 | (c >> 18)), 0x01000193);
      h = Math.imul(h ^ (0x80 | ((c >> 12) & 0x3f)), 0x01000193);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 0x3f)), 0x01000193);
    }
    h = Math.imul(h ^ (0x80 | (c & 0x3f)), 0x01000193);
  }
  return h >>> 0;
}

/** The shard of an actor key: `fnv1a32(key) % shards`. */
export function shardOf(key: string, shards: number): number {
  return fnv1a32(key) % shards;
}

/** Which owner hosts each shard. Mutated only by the actor system's supervisor logic. */
export class ShardMap {
  readonly #owners: ShardOwner[];

  /** Every shard starts with the owner `initial(shard)` gives. */
  constructor(
    readonly shards: number,
    initial: (shard: number) => ShardOwner,
  ) {
    this.#owners = new Array<ShardOwner>(shards);
    for (let s = 0; s < shards; s++) this.#owners[s] = initial(s);
  }

  /** The shard of `key`. */
  shardOf(key: string): number {
    return fnv1a32(key) % this.shards;
  }

  /** The current owner of `shard`. */
  owner(shard: number): ShardOwner {
    return this.#owners[shard]!;
  }

  /** Moves `shard` to `owner` (the caller has already made sure no actor of it is alive elsewhere). */
  assign(shard: number, owner: ShardOwner): void {
    this.#owners[shard] = owner;
  }

  /** How many shards each owner holds, keyed by owner value. */
  counts(): Map<ShardOwner, number> {
    const out = new Map<ShardOwner, number>();
    for (const o of this.#owners) out.set(o, (out.get(o) ?? 0) + 1);
    return out;
  }
}
