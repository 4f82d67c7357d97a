import type { AgentProgram } from '../language/index.js';
import type { AgentStore } from './agent-store.js';

const MAX_ENTRIES = 2000;

/**
 * Compiled programs by agent version, per thread. Versions are immutable, so an entry never goes
 * stale; the bound only caps memory (least recently used goes first).
 */
export class ProgramCache {
  readonly #agents: AgentStore;
  readonly #entries = new Map<string, AgentProgram>();

  constructor(agents: AgentStore) {
    this.#agents = agents;
  }

  /** The program of that version, or undefined when the version does not exist. */
  get(tenantId: string, projectId: string, name: string, version: number): AgentProgram | undefined {
    const key = `${tenantId}\u0000${projectId}\u0000${name}\u0000${version}`;
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit;
    }
    const record = this.#agents.version(tenantId, projectId, name, version);
    if (!record) return undefined;
    const program = deepFreeze(record.program);
    this.#entries.set(key, program);
    if (this.#entries.size > MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    return program;
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
