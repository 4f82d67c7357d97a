/**
 * Lowering the CPU priority of one thread, for background work (the analytics writer) that must
 * yield to the threads serving requests. On Linux the nice value is a per-thread attribute
 * (setpriority(2), NOTES: under NPTL it applies to the thread whose id is given), and a thread
 * finds its own id through /proc/thread-self. Elsewhere this does nothing.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The calling thread's kernel thread id, or undefined where /proc/thread-self does not exist. */
export function currentThreadId(): number | undefined {
  try {
    const link = readlinkSync('/proc/thread-self'); // "<pid>/task/<tid>"
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/** Gives the calling thread nice value `nice` (default 19, the lowest priority); true when it took effect. */
export function lowerThreadPriority(nice = 19): boolean {
  const tid = currentThreadId();
  if (tid === undefined) return false;
  try {
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
