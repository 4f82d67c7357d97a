/**
 * Entry of a sandbox worker (a piscina thread). Each task runs in a fresh node:vm context with
 * code generation from strings off and its own microtask queue, so every piece of user code —
 * the module body, the call, and each continuation after a ctx answer — runs inside a timed
 * evaluation. The parent also aborts the task (terminating this thread) as a last resort.
 */
import { types } from 'node:util';
import { createContext, Script } from 'node:vm';
import type { MessagePort } from 'node:worker_threads';
import { BOOTSTRAP_SOURCE, MAX_LOG_LINES } from './sandbox-bootstrap.js';
import type { SandboxOutcome, SandboxReply, SandboxRequest, SandboxTask } from './sandbox-messages.js';

// Messages one call may send (memory calls plus log lines); beyond this the call fails.
const MAX_MESSAGES = 10_000;

/** Runs one CODE tool call; never throws (a thrown error here would be a bug of the sandbox). */
export default async function runSandboxTask(task: SandboxTask): Promise<SandboxOutcome> {
  const deadline = Date.now() + task.timeoutMs;
  const logs: string[] = [];
  const outbox: string[] = [];
  let messages = 0;
  let flooded = false;
  let oversized = false;
  const send = (text: unknown): void => {
    if (typeof text !== 'string') return;
    if (++messages > MAX_MESSAGES) flooded = true;
    // Room for the message's own fields around a value at the limit.
    else if (text.length > task.maxResultChars + 200) oversized = true;
    else outbox.push(text);
  };
  const timedOut = (): SandboxOutcome => ({ ok: false, error: `Tool ${task.toolName} ran longer than ${task.timeoutMs} ms`, logs });
  const replies = new ReplyQueue(task.port);
  try {
    const context = createContext(Object.create(null), { name: 'parley-tool', codeGeneration: { strings: false, wasm: false }, microtaskMode: 'afterEvaluate' });
    const bootstrap = new Script(BOOTSTRAP_SOURCE).runInContext(context, { timeout: 1000 }) as (send: (text: unknown) => void) => void;
    bootstrap(send);
    let script: Script;
    try {
      script = new Script(task.script, { filename: `${task.toolName}.js` });
    } catch (err) {
      return { ok: false, error: `The code of tool ${task.toolName} does not compile: ${(err as Error).message}`, logs };
    }
    const run = (s: Script): 'ok' | 'timeout' => {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return 'timeout';
      try {
        s.runInContext(context, { timeout: remaining, breakOnSigint: false });
      } catch (err) {
        if (isTimeout(err)) return 'timeout';
        // User errors are caught in the context; whatever else escapes may be a sandbox value, so
        // it is never inspected (a getter or proxy trap would run outside the time limit).
        outbox.push(JSON.stringify({ type: 'done', ok: false, error: `Tool ${task.toolName} failed` }));
      }
      return 'ok';
    };
    if (run(script) === 'timeout') return timedOut();
    let inFlight = 0;
    for (;;) {
      // Hand over what the code sent during the last evaluation.
      while (outbox.length > 0) {
        const msg = JSON.parse(outbox.shift()!) as { type: string; [k: string]: unknown };
        if (msg.type === 'done') {
          if (msg['ok'] !== true) return { ok: false, error: String(msg['error']), logs };
          const resultJson = String(msg['resultJson']);
          if (resultJson.length > task.maxResultChars) return { ok: false, error: `The result of tool ${task.toolName} is larger than ${task.maxResultChars} characters of JSON`, logs };
          return { ok: true, resultJson, logs };
        }
        if (msg.type === 'log') {
          if (logs.length <= MAX_LOG_LINES) logs.push(String(msg['line']));
        } else if (msg.type === 'memory') {
          inFlight++;
          const request: SandboxRequest = { type: 'memory', id: Number(msg['id']), action: msg['action'] as SandboxRequest['action'], key: String(msg['key']) };
          if (typeof msg['contentJson'] === 'string') request.contentJson = msg['contentJson'];
          task.port.postMessage(request);
        }
      }
      if (oversized) return { ok: false, error: `Tool ${task.toolName} produced a result or memory value larger than ${task.maxResultChars} characters of JSON`, logs };
      if (flooded) return { ok: false, error: `Tool ${task.toolName} made more than ${MAX_MESSAGES} ctx calls`, logs };
      if (inFlight === 0) {
        // No timers and no I/O exist in the sandbox: with no ctx call pending, nothing can ever resume the code.
        return { ok: false, error: `Tool ${task.toolName} returned a promise that never settles`, logs };
      }
      const reply = await replies.next(deadline);
      if (!reply) return timedOut();
      inFlight--;
      const text = reply.ok ? reply.valueJson : reply.error;
      const delivery = new Script(`__parley_deliver(${reply.id}, ${reply.ok}, ${JSON.stringify(text)});`);
      if (run(delivery) === 'timeout') return timedOut();
    }
  } finally {
    replies.close();
  }
}

// The vm's own timeout error; read without running any getter or proxy trap of a sandbox value.
function isTimeout(err: unknown): boolean {
  if (!types.isNativeError(err) || types.isProxy(err)) return false;
  return Object.getOwnPropertyDescriptor(err, 'code')?.value === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}

/** Answers from the parent, awaited one at a time with a deadline. */
class ReplyQueue {
  readonly #port: MessagePort;
  readonly #queue: SandboxReply[] = [];
  #waiter: ((reply: SandboxReply | undefined) => void) | undefined;

  constructor(port: MessagePort) {
    this.#port = port;
    port.on('message', (reply: SandboxReply) => {
      if (this.#waiter) {
        const waiter = this.#waiter;
        this.#waiter = undefined;
        waiter(reply);
      } else this.#queue.push(reply);
    });
  }

  /** The next reply, or undefined once `deadline` passes. */
  next(deadline: number): Promise<SandboxReply | undefined> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiter = undefined;
        resolve(undefined);
      }, Math.max(0, deadline - Date.now()));
      this.#waiter = (reply) => {
        clearTimeout(timer);
        resolve(reply);
      };
    });
  }

  close(): void {
    this.#port.removeAllListeners('message');
    this.#port.close();
  }
}
