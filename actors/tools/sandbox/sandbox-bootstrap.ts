/**
 * The code that runs first in every fresh sandbox context. It builds `ctx` out of objects of the
 * context's own realm and talks to the host only through `send(text)`, a host function it keeps
 * in a closure user code cannot reach. Everything crossing to the host is a string made here;
 * everything coming back is a string literal compiled into a delivery script. No host object,
 * function or promise is ever visible to user code (their constructor chains would lead out).
 */

/** Most ctx.log lines one call keeps (later lines are dropped, with one note). */
export const MAX_LOG_LINES = 100;
/** Longest ctx.log line, in characters (longer lines are cut). */
export const MAX_LOG_LINE_CHARS = 1000;

/** Globals removed from the context: buffers live outside the heap limit, and the rest are not needed. */
export const REMOVED_GLOBALS = ['SharedArrayBuffer', 'ArrayBuffer', 'Atomics', 'WebAssembly', 'DataView', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'FinalizationRegistry', 'WeakRef'];

/** Source of the bootstrap: evaluates to `(send) => void`, defining __parley_start and __parley_deliver. */
export const BOOTSTRAP_SOURCE = `(function (send) {
  "use strict";
  const stringify = JSON.stringify, parse = JSON.parse, freeze = Object.freeze, define = Object.defineProperty;
  const PromiseCtor = Promise, MapCtor = Map, StringCtor = String, TypeErrorCtor = TypeError;
  for (const name of ${JSON.stringify(REMOVED_GLOBALS)}) delete globalThis[name];
  const pending = new MapCtor();
  let nextId = 1, logLines = 0, finished = false;
  const describe = (err) => {
    try {
      if (err !== null && typeof err === 'object' && typeof err.message === 'string') return StringCtor(err.name || 'Error') + ': ' + err.message;
      return 'Thrown: ' + StringCtor(err);
    } catch {
      return 'The code threw a value that cannot be described';
    }
  };
  const call = (msg) => {
    const id = nextId++;
    msg.id = id;
    return new PromiseCtor((resolve, reject) => {
      pending.set(id, { resolve, reject });
      send(stringify(msg));
    });
  };
  const memoryKey = (key) => {
    if (typeof key !== 'string' || key.length === 0 || key.length > 128) throw new TypeErrorCtor('ctx.memory keys are strings of 1 to 128 characters');
    return key;
  };
  const show = (v) => {
    if (typeof v === 'string') return v;
    try { const s = stringify(v); return s === undefined ? StringCtor(v) : s; } catch { return '[unprintable]'; }
  };
  const ctx = freeze({
    memory: freeze({
      get: (key) => call({ type: 'memory', action: 'get', key: memoryKey(key) }),
      set: (key, value) => {
        memoryKey(key);
        let contentJson;
        try { contentJson = stringify(value); } catch { contentJson = undefined; }
        if (contentJson === undefined) return PromiseCtor.reject(new TypeErrorCtor('ctx.memory.set takes a JSON-serialisable value'));
        return call({ type: 'memory', action: 'set', key, contentJson }).then(() => undefined);
      },
      delete: (key) => call({ type: 'memory', action: 'delete', key: memoryKey(key) }).then((r) => r.deleted),
    }),
    log: (...args) => {
      if (logLines > ${MAX_LOG_LINES}) return;
      logLines++;
      let line = logLines > ${MAX_LOG_LINES} ? '(more log lines were dropped)' : args.map(show).join(' ');
      if (line.length > ${MAX_LOG_LINE_CHARS}) line = line.slice(0, ${MAX_LOG_LINE_CHARS}) + '…';
      send(stringify({ type: 'log', line }));
    },
  });
  const finish = (ok, value) => {
    if (finished) return;
    finished = true;
    if (!ok) return send(stringify({ type: 'done', ok: false, error: describe(value) }));
    let resultJson;
    try { resultJson = stringify(value === undefined ? null : value); } catch { resultJson = undefined; }
    if (typeof resultJson !== 'string') return send(stringify({ type: 'done', ok: false, error: 'The result is not JSON-serialisable' }));
    send(stringify({ type: 'done', ok: true, resultJson }));
  };
  define(globalThis, '__parley_start', { value: (load, paramsJson) => {
    let result;
    try {
      const main = load();
      if (typeof main !== 'function') return finish(false, new TypeErrorCtor('The code must export a function: export default async (params, ctx) => { … }'));
      result = main(parse(paramsJson), ctx);
    } catch (err) {
      return finish(false, err);
    }
    PromiseCtor.resolve(result).then((v) => finish(true, v), (err) => finish(false, err));
  } });
  define(globalThis, '__parley_deliver', { value: (id, ok, text) => {
    const waiter = pending.get(id);
    if (!waiter) return;
    pending.delete(id);
    if (ok) waiter.resolve(parse(text));
    else waiter.reject(new Error(text));
  } });
})`;
