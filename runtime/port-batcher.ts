/**
 * Coalesces the encoded messages sent to one thread during an event-loop turn into a single
 * transfer. A postMessage costs a wake-up of the other thread whatever its size; under load many
 * asks and replies leave in the same turn, and one transfer carries them all. msgpack values are
 * self-delimiting, so the receiver splits the batch with `decodeAll`.
 */
export class PortBatcher {
  #parts: ArrayBuffer[] = [];
  #bytes = 0;
  #scheduled = false;
  readonly #post: (buf: ArrayBuffer) => void;

  constructor(post: (buf: ArrayBuffer) => void) {
    this.#post = post;
  }

  /** Queues an encoded message; it leaves at the end of this event-loop turn, in order. */
  push(buf: ArrayBuffer): void {
    this.#parts.push(buf);
    this.#bytes += buf.byteLength;
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  /** Sends what is queued now (before a thread exits, say). */
  flush(): void {
    this.#flush();
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    const parts = this.#parts;
    if (parts.length === 0) return;
    this.#parts = [];
    const total = this.#bytes;
    this.#bytes = 0;
    if (parts.length === 1) {
      this.#post(parts[0]!);
      return;
    }
    const out = new Uint8Array(total);
    let offset = 0;
    for (const part of parts) {
      out.set(new Uint8Array(part), offset);
      offset += part.byteLength;
    }
    this.#post(out.buffer);
  };
}
