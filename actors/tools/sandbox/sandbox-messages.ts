/** Messages between the parent (CodeSandbox) and a sandbox worker: one task, and a MessagePort for ctx calls. */
import type { MessagePort } from 'node:worker_threads';

/** The actions ctx.memory offers (the memory endpoint's actions). */
export type MemoryAction = 'get' | 'set' | 'delete';

/** One call, as piscina hands it to a worker. */
export interface SandboxTask {
  toolName: string;
  /** The prepared script (see prepareToolSource). */
  script: string;
  /** The params as JSON text. */
  paramsJson: string;
  timeoutMs: number;
  /** Largest result, as JSON text, in characters. */
  maxResultChars: number;
  /** Where the worker sends ctx calls and receives their answers. */
  port: MessagePort;
}

/** Worker → parent over the port. */
export type SandboxRequest = { type: 'memory'; id: number; action: MemoryAction; key: string; contentJson?: string };

/** Parent → worker over the port: the answer to a SandboxRequest (value as JSON text). */
export type SandboxReply = { type: 'reply'; id: number; ok: true; valueJson: string } | { type: 'reply'; id: number; ok: false; error: string };

/** What the worker answers for one task (the result as JSON text, checked against the size limit). */
export type SandboxOutcome = { ok: true; resultJson: string; logs: string[] } | { ok: false; error: string; logs: string[] };
