import { Packr } from 'msgpackr';
import type { ThreadMessage } from './thread-messages.js';

// Maps, not records: records would need structures shared between threads, which a replaced
// worker would not have.
const packr = new Packr({ useRecords: false });

/**
 * Encodes a thread message into an ArrayBuffer of its own, ready to be transferred
 * (`postMessage(buf, [buf])`). msgpackr packs into a shared pool, so the bytes are copied once:
 * transferring the pool itself would detach it.
 */
export function encode(message: ThreadMessage): ArrayBuffer {
  const view = packr.pack(message);
  return view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength) as ArrayBuffer;
}

/** Decodes a buffer produced by `encode` (the caller narrows the union it expects). */
export function decode<T extends ThreadMessage>(buffer: ArrayBuffer): T {
  return packr.unpack(new Uint8Array(buffer)) as T;
}

/** Decodes a batch of concatenated encoded messages (see PortBatcher), in order. */
export function decodeAll<T extends ThreadMessage>(buffer: ArrayBuffer): T[] {
  return packr.unpackMultiple(new Uint8Array(buffer)) as T[];
}
