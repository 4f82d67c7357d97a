// Public surface of the runtime layer. Siblings import from here, never from internals.
export * from './errors.js';
export * from './config.js';
export * from './log.js';
export * from './ids.js';
export * from './actor.js';
export type { Store, Collection, Key, Entry, RangeOptions } from './store/store.js';
export { LmdbStore, type LmdbStoreOptions } from './store/lmdb-store.js';
