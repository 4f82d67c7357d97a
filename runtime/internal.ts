// Internals of the runtime that tests (and benches) may reach; production code imports index.ts.
export { ActorHost, type ActorHostOptions } from './actor-host.js';
export { encode, decode } from './codec.js';
export { Envelope, Mailbox, type ReplySink } from './mailbox.js';
export { PendingAsks, PendingAsk } from './pending-asks.js';
export { SafeEmitter } from './safe-emitter.js';
export { ShardMap, workerOwner } from './shard-map.js';
export { Supervisor, WorkerSlot, type SupervisorOptions, type SupervisorHooks } from './supervisor.js';
export type * from './thread-messages.js';
export type { WorkerBootData } from './worker-main.js';
