import { mkdirSync } from 'node:fs';
import { asBinary, open, type Database, type Key as LmdbKey, type RangeOptions as LmdbRangeOptions, type RootDatabase } from 'lmdb';
import { Packr } from 'msgpackr';
import { toBufferKey } from 'ordered-binary';
import type { Collection, Entry, Key, KeyBounds, Prepared, RangeOptions, Store } from './store.js';

// msgpackr encoder options lmdb-js passes through (its typings omit them).
const PLAIN_MSGPACK = { useRecords: false } as object;
const valueEncoder = new Packr(PLAIN_MSGPACK);

/**
 * A value in the store's value encoding (plain msgpack), for Collection.putPreparedSync. Any
 * thread may prepare values: the bytes can be posted to the thread that writes them.
 */
export function prepareValue<T>(value: T): Prepared<T> {
  // pack() returns a view of a buffer it reuses: copy it out.
  return new Uint8Array(valueEncoder.pack(value)) as Prepared<T>;
}

/** Options of the LMDB store. */
export interface LmdbStoreOptions {
  /** Folder of the environment (created if missing). */
  path: string;
  /** See Config.durability. */
  durability: 'commit' | 'flush';
}

// ordered-binary joins tuple elements with byte 0x1e; prefix + 0x1e 0xff sorts after every key
// that extends the prefix, so [prefix, end) is exactly "keys starting with prefix".
const SEPARATOR_AND_MAX = Buffer.from([0x1e, 0xff]);
function prefixEnd(prefix: Key): LmdbKey {
  if (prefix.length === 0) return Buffer.from([0xff]) as unknown as LmdbKey;
  return Buffer.concat([toBufferKey(prefix as (string | number)[]), SEPARATOR_AND_MAX]) as unknown as LmdbKey;
}

/**
 * The LMDB-backed Store. One environment per process folder; every thread opens it and lmdb-js
 * shares it. Durability, said once here for every write:
 *  - lmdb-js batches async writes into one transaction and resolves their promises at commit.
 *    With overlappingSync (the default on Linux) a committed transaction is what the database
 *    reopens to after a process crash (same boot), so a resolved put survives SIGKILL.
 *  - `flushed` resolves once the OS has synced that commit: only then does it survive a power
 *    cut. Durability `flush` waits for it on every write.
 */
export class LmdbStore implements Store {
  readonly #root: RootDatabase;
  readonly #collections = new Map<string, LmdbCollection<unknown>>();
  readonly #flush: boolean;
  #open = true;

  constructor(options: LmdbStoreOptions) {
    mkdirSync(options.path, { recursive: true });
    this.#flush = options.durability === 'flush';
    // Records (msgpackr's shared structures) are off: our values have many shapes and maps with
    // dynamic keys (slots, pinned versions), which exhaust the shared table and make every read
    // re-define its structures inline. Plain msgpack maps decode faster here.
    this.#root = open({ path: options.path, maxDbs: 64, encoding: 'msgpack', compression: false, ...PLAIN_MSGPACK });
  }

  get isOpen(): boolean {
    return this.#open;
  }

  collection<T>(name: string): Collection<T> {
    let c = this.#collections.get(name);
    if (!c) {
      const db = this.#root.openDB<unknown, LmdbKey>({ name, encoding: 'msgpack', ...PLAIN_MSGPACK });
      c = new LmdbCollection<unknown>(name, db, () => this.#durable());
      this.#collections.set(name, c);
    }
    return c as Collection<T>;
  }

  async transaction<R>(fn: () => R): Promise<R> {
    const result = await this.#root.transaction(fn);
    await this.#durable();
    return result;
  }

  async close(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    await this.#root.close();
  }

  async #durable(): Promise<void> {
    if (this.#flush) await this.#root.flushed;
  }
}

function isKeyTooLarge(err: unknown): boolean {
  return err instanceof Error && /does not fit in target buffer|key size|too large/i.test(err.message);
}

class LmdbCollection<T> implements Collection<T> {
  constructor(
    readonly name: string,
    readonly db: Database<T, LmdbKey>,
    readonly durable: () => Promise<void>,
  ) {}

  get(key: Key): T | undefined {
    try {
      return this.db.get(key as LmdbKey);
    } catch (err) {
      // A key longer than LMDB allows (about 1.9 KB) cannot name a stored record: it is simply
      // absent. Callers pass user input (ids, identities) straight through, so this must not 500.
      if (isKeyTooLarge(err)) return undefined;
      throw err;
    }
  }

  async put(key: Key, value: T): Promise<void> {
    await this.db.put(key as LmdbKey, value);
    await this.durable();
  }

  async remove(key: Key): Promise<boolean> {
    const removed = await this.db.remove(key as LmdbKey);
    await this.durable();
    return removed;
  }

  putSync(key: Key, value: T): void {
    this.db.putSync(key as LmdbKey, value);
  }

  putPreparedSync(key: Key, value: Prepared<T>): void {
    this.db.putSync(key as LmdbKey, asBinary(value) as unknown as T);
  }

  removeSync(key: Key): boolean {
    return this.db.removeSync(key as LmdbKey);
  }

  range(options: RangeOptions): Entry<T>[] {
    const out: Entry<T>[] = [];
    for (const { key, value } of this.db.getRange(rangeOf(options))) out.push({ key: key as Key, value });
    return out;
  }

  keys(options: RangeOptions): Key[] {
    const out: Key[] = [];
    for (const key of this.db.getKeys(rangeOf(options))) out.push(key as Key);
    return out;
  }

  count(prefix: Key, keyBounds?: KeyBounds): number {
    return this.db.getKeysCount(bounds(prefix, keyBounds ?? {}));
  }
}

/** lmdb-js range options for a RangeOptions. */
function rangeOf(options: RangeOptions): LmdbRangeOptions {
  const { start, end } = bounds(options.prefix, options);
  // Reversed, lmdb-js takes [end, start) the other way round: flip both inclusions so the
  // range stays [start, end).
  return options.reverse
    ? { start: end, end: start, reverse: true, exclusiveStart: true, inclusiveEnd: true, offset: options.offset, limit: options.limit }
    : { start, end, offset: options.offset, limit: options.limit };
}

/** The lmdb-js [start, end) of a prefix, narrowed by optional start/end keys. */
function bounds(prefix: Key, narrow: KeyBounds): { start: LmdbKey | undefined; end: LmdbKey } {
  const start = narrow.start ?? (prefix.length === 0 ? undefined : prefix);
  return { start: start as LmdbKey | undefined, end: narrow.end ? (narrow.end as LmdbKey) : prefixEnd(prefix) };
}
