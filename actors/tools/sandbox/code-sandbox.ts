import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from '../../../runtime/index.js';
import type { CodeToolSpec } from '../../language/index.js';
import { toolError, type ToolResult } from '../tool-result.js';
import type { MemoryAction, SandboxOutcome, SandboxReply, SandboxRequest, SandboxTask } from './sandbox-messages.js';
import { prepareToolSource } from './tool-source.js';

/** What ctx.memory calls from the sandbox reach: the memory endpoint's logic for the call's session. */
export type SandboxMemoryBridge = (action: MemoryAction, key: string, content: unknown) => Promise<{ ok: true; value: unknown } | { ok: false; error: string }>;

/** Options of a CodeSandbox, checked at construction. */
export interface CodeSandboxOptions {
  /** Worker threads per memory size (default 2). */
  maxThreads?: number;
  /** Calls waiting for a worker before new ones fail as busy (default 64). */
  maxQueue?: number;
  /** An idle worker is stopped after this many ms (default 30 000). */
  idleTimeoutMs?: number;
  /** Largest result, as JSON, in characters (default 256 000). */
  maxResultChars?: number;
  log?: Logger;
}

/** A CODE tool's answer, with the lines it logged through ctx.log. */
export type CodeToolResult = ToolResult & { logs: string[] };

const WORKER_URL = new URL('./sandbox-worker.js', import.meta.url).href;
// Beyond its own timeout a call gets this long before its worker is terminated: the worker's vm
// timeouts end every ordinary overrun, so the abort only catches what escapes them.
const ABORT_GRACE_MS = 1000;

/**
 * Runs CODE tools on piscina pools (one per memory limit, since a heap limit is a property of a
 * worker). A call that exhausts its heap kills only its worker; piscina replaces it.
 */
export class CodeSandbox {
  readonly #pools = new Map<number, Piscina<SandboxTask, SandboxOutcome>>();
  readonly #maxThreads: number;
  readonly #maxQueue: number;
  readonly #idleTimeoutMs: number;
  readonly #maxResultChars: number;
  readonly #log: Logger | undefined;
  #closed = false;

  constructor(options: CodeSandboxOptions = {}) {
    this.#maxThreads = positiveInt(options.maxThreads ?? 2, 'options.maxThreads');
    this.#maxQueue = positiveInt(options.maxQueue ?? 64, 'options.maxQueue');
    this.#idleTimeoutMs = positiveInt(options.idleTimeoutMs ?? 30_000, 'options.idleTimeoutMs');
    this.#maxResultChars = positiveInt(options.maxResultChars ?? 256_000, 'options.maxResultChars');
    this.#log = options.log;
  }

  /** Runs one call; never throws: every failure is a tool error in plain words. */
  async run(spec: CodeToolSpec, params: Record<string, unknown>, memory: SandboxMemoryBridge | undefined): Promise<CodeToolResult> {
    if (this.#closed) return { ...toolError('The code sandbox is shut down'), logs: [] };
    const prepared = prepareToolSource(spec.source, JSON.stringify(params));
    if (!prepared.ok) return { ...toolError(`Tool ${spec.name}: ${prepared.error}`), logs: [] };
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (request: SandboxRequest) => void this.#answer(port1, request, memory));
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), spec.timeoutMs + ABORT_GRACE_MS);
    try {
      const task: SandboxTask = { toolName: spec.name, script: prepared.script, paramsJson: JSON.stringify(params), timeoutMs: spec.timeoutMs, maxResultChars: this.#maxResultChars, port: port2 };
      const outcome = await this.#pool(spec.memoryMb).run(task, { transferList: [port2], signal: abort.signal });
      if (!outcome.ok) return { ok: false, error: outcome.error, logs: outcome.logs };
      return { ok: true, result: JSON.parse(outcome.resultJson), logs: outcome.logs };
    } catch (err) {
      return { ...this.#failure(spec, err, abort.signal.aborted), logs: [] };
    } finally {
      clearTimeout(timer);
      port1.close();
    }
  }

  /** Stops every worker; safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }

  #pool(memoryMb: number): Piscina<SandboxTask, SandboxOutcome> {
    let pool = this.#pools.get(memoryMb);
    if (!pool) {
      pool = new Piscina<SandboxTask, SandboxOutcome>({
        filename: WORKER_URL,
        name: 'default',
        minThreads: 0,
        maxThreads: this.#maxThreads,
        maxQueue: this.#maxQueue,
        idleTimeout: this.#idleTimeoutMs,
        // One call per worker: a heap exhausted by one call never takes another with it.
        concurrentTasksPerWorker: 1,
        atomics: 'disabled',
        resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.min(16, Math.max(1, Math.floor(memoryMb / 4))), stackSizeMb: 4 },
        // The worker sees no environment variables (they may hold secrets).
        env: {},
      });
      // A worker dying with its task is reported through that task's promise; this keeps the
      // pool's own 'error' event from crashing the process.
      pool.on('error', (err: unknown) => this.#log?.warn('sandbox pool error', { err }));
      this.#pools.set(memoryMb, pool);
    }
    return pool;
  }

  async #answer(port: MessageChannel['port1'], request: SandboxRequest, memory: SandboxMemoryBridge | undefined): Promise<void> {
    let reply: SandboxReply;
    if (!memory) reply = { type: 'reply', id: request.id, ok: false, error: 'ctx.memory is not available for this call' };
    else {
      try {
        const content = request.contentJson === undefined ? undefined : JSON.parse(request.contentJson);
        const outcome = await memory(request.action, request.key, content);
        reply = outcome.ok ? { type: 'reply', id: request.id, ok: true, valueJson: JSON.stringify(outcome.value ?? null) } : { type: 'reply', id: request.id, ok: false, error: outcome.error };
      } catch {
        reply = { type: 'reply', id: request.id, ok: false, error: 'ctx.memory failed' };
      }
    }
    try {
      port.postMessage(reply);
    } catch {
      // The call ended (port closed) before the answer came: nobody is waiting for it.
    }
  }

  #failure(spec: CodeToolSpec, err: unknown, aborted: boolean): ToolResult {
    const code = (err as { code?: unknown } | undefined)?.code;
    const message = String((err as { message?: unknown } | undefined)?.message ?? '');
    if (aborted) return toolError(`Tool ${spec.name} ran longer than ${spec.timeoutMs} ms`);
    if (code === 'ERR_WORKER_OUT_OF_MEMORY' || /out of memory/i.test(message)) return toolError(`Tool ${spec.name} used more than ${spec.memoryMb} MB of memory`);
    if (/queue is at limit/i.test(message)) return toolError(`The code sandbox is busy; tool ${spec.name} was not run`);
    this.#log?.error('sandbox call failed', { tool: spec.name, err });
    return toolError(`Tool ${spec.name} failed in the sandbox`);
  }
}

function positiveInt(n: number, name: string): number {
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}
