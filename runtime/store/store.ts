/**
 * Storage interfaces. LMDB implements them on a single node; a Redis-backed coordination layer
 * can sit beside them later (shared records, leases) without domain code changing.
 */

/** An ordered key tuple; tenant id first wherever data is tenant-scoped. */
export type Key = readonly (string | number)[];

/** One entry of a range scan. */
export interface Entry<T> {
  key: Key;
  value: T;
}

/** Options of a prefix range scan. */
export interface RangeOptions {
  /** Only keys that start with these elements. */
  prefix: Key;
  /** Skip this many entries first. */
  offset?: number;
  /** Return at most this many entries. */
  limit?: number;
  /** Newest/highest key first. */
  reverse?: boolean;
  /** Only keys at or after this one (a full or partial key that extends `prefix`). */
  start?: Key;
  /** Only keys before this one (exclusive; a full or partial key that extends `prefix`). */
  end?: Key;
}

/** Optional bounds of a count, as in RangeOptions: start inclusive, end exclusive. */
export interface KeyBounds {
  start?: Key;
  end?: Key;
}

declare const preparedValue: unique symbol;
/** A value already in the store's encoding (see prepareValue); plain bytes, so it can cross threads. */
export type Prepared<T> = Uint8Array & { readonly [preparedValue]?: T };

/** A typed, ordered collection of records. Reads are synchronous (memory-mapped); writes are durable when their promise resolves. */
export interface Collection<T> {
  readonly name: string;
  /** The record at `key`, or undefined. */
  get(key: Key): T | undefined;
  /**
   * Writes `value` at `key`. The promise resolves once the write is committed, which survives a
   * SIGKILL of the process; with durability `flush` it also waits for the OS to sync it to disk.
   */
  put(key: Key, value: T): Promise<void>;
  /** Deletes `key`; resolves true when something was there. Same durability as put. */
  remove(key: Key): Promise<boolean>;
  /** Entries whose key starts with `prefix` (and lies in [start, end) when given), in key order. */
  range(options: RangeOptions): Entry<T>[];
  /** The keys `range` would return, without reading their values. */
  keys(options: RangeOptions): Key[];
  /** Number of entries whose key starts with `prefix` (and lies in [start, end) when given). */
  count(prefix: Key, bounds?: KeyBounds): number;
  /** Inside `Store.transaction`: write without waiting (the transaction commits all at once). */
  putSync(key: Key, value: T): void;
  /**
   * Inside `Store.transaction`: writes a value encoded earlier (on any thread) by prepareValue,
   * so expensive encoding stays out of the write lock that every writer waits for.
   */
  putPreparedSync(key: Key, value: Prepared<T>): void;
  /** Inside `Store.transaction`: delete without waiting. */
  removeSync(key: Key): boolean;
}

/** A store of named collections sharing one transaction space. */
export interface Store {
  /** Opens (or returns the already open) collection `name`. */
  collection<T>(name: string): Collection<T>;
  /**
   * Runs `fn` in one atomic write transaction; use putSync/removeSync inside. Reads inside see
   * the transaction's own writes. Resolves after commit (and flush, with durability `flush`).
   */
  transaction<R>(fn: () => R): Promise<R>;
  /** True while the environment is open. */
  readonly isOpen: boolean;
  /** Closes the environment; safe to call twice. */
  close(): Promise<void>;
}
