// Public surface of the runtime layer. Siblings import from here, never from internals.
export * from './errors.js';
export * from './config.js';
export * from './log.js';
export * from './ids.js';
export * from './actor.js';
export type { Store, Collection, Key, Entry, RangeOptions, KeyBounds, Prepared } from './store/store.js';
export { LmdbStore, prepareValue, type LmdbStoreOptions } from './store/lmdb-store.js';
export { currentThreadId, lowerThreadPriority } from './thread-priority.js';
export * from './crypto.js';
export * from './persistent-secret.js';
export { ActorSystem, type ActorSystemOptions, type ActorSystemEvents, type ActorSystemStats, type WorkerStats } from './actor-system.js';
export type { WorkerState } from './supervisor.js';
export { shardOf, fnv1a32, type ShardOwner, type WorkerOwner } from './shard-map.js';
export * from './secret-box.js';
