import { cuid, ParleyError, type Collection, type Store } from '../../runtime/index.js';
import { compileAgent } from '../language/index.js';
import type { AgentRecord, AgentVersion, AgentVersionSummary } from './agent-records.js';

/** Agent names: lower-case letters, digits and underscores, starting with a letter. */
export const AGENT_NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** Largest DSL source accepted, in characters. */
export const MAX_DSL_LENGTH = 256 * 1024;

/** Agents and their immutable versions, keyed [tenantId, projectId, name(, version)]. */
export class AgentStore {
  readonly #store: Store;
  readonly #agents: Collection<AgentRecord>;
  readonly #versions: Collection<AgentVersion>;

  constructor(store: Store) {
    this.#store = store;
    this.#agents = store.collection('agents');
    this.#versions = store.collection('agentVersions');
  }

  /** Creates an agent's working copy; 409 when the name is taken in the project. */
  async create(tenantId: string, projectId: string, input: { name: string; dslContent: string; description: string | null }): Promise<AgentRecord> {
    const now = new Date().toISOString();
    const record: AgentRecord = {
      id: cuid(), tenantId, projectId, name: input.name, description: input.description,
      dslContent: input.dslContent, versionCount: 0, createdAt: now, updatedAt: now,
    };
    await this.#store.transaction(() => {
      if (this.#agents.get([tenantId, projectId, input.name])) {
        throw new ParleyError('CONFLICT', `An agent named "${input.name}" already exists in this project`, { field: 'name' });
      }
      this.#agents.putSync([tenantId, projectId, input.name], record);
    });
    return record;
  }

  /** The agent, or undefined (also for another tenant's). */
  get(tenantId: string, projectId: string, name: string): AgentRecord | undefined {
    return this.#agents.get([tenantId, projectId, name]);
  }

  /** The agent or NOT_FOUND. */
  require(tenantId: string, projectId: string, name: string): AgentRecord {
    const agent = this.get(tenantId, projectId, name);
    if (!agent) throw new ParleyError('NOT_FOUND', 'Agent not found');
    return agent;
  }

  /** Agents of a project, in name order. */
  list(tenantId: string, projectId: string): AgentRecord[] {
    return this.#agents.range({ prefix: [tenantId, projectId] }).map((e) => e.value);
  }

  /** Agents of every project of a tenant. */
  listTenant(tenantId: string): AgentRecord[] {
    return this.#agents.range({ prefix: [tenantId] }).map((e) => e.value);
  }

  /** Replaces the working copy (no compilation, no version). */
  async updateDsl(tenantId: string, projectId: string, name: string, dslContent: string): Promise<AgentRecord> {
    return this.#store.transaction(() => {
      const agent = this.require(tenantId, projectId, name);
      const updated: AgentRecord = { ...agent, dslContent, updatedAt: new Date().toISOString() };
      this.#agents.putSync([tenantId, projectId, name], updated);
      return updated;
    });
  }

  /**
   * Compiles the working copy into version N+1. Compile errors are a VALIDATION_ERROR whose
   * details list every error with line and column. The read of the working copy, the version
   * number and both writes happen in one transaction, so concurrent compiles never share a number.
   */
  async compile(tenantId: string, projectId: string, name: string, createdBy: string | null): Promise<AgentVersion> {
    const source = this.require(tenantId, projectId, name).dslContent;
    // HANDOFF/DELEGATE may only name agents of this project (compiled or not yet).
    const knownAgents = new Set(this.list(tenantId, projectId).map((a) => a.name));
    const result = compileAgent(source, { knownAgents });
    if (!result.ok) {
      const first = result.errors[0]!;
      throw new ParleyError('VALIDATION_ERROR', `Line ${first.line}, column ${first.column}: ${first.message}`, { errors: result.errors });
    }
    if (result.program.name !== name) {
      throw new ParleyError('VALIDATION_ERROR', `Line 1, column 1: the AGENT name "${result.program.name}" must match the agent's name "${name}"`, {
        errors: [{ line: 1, column: 1, message: `The AGENT name "${result.program.name}" must match the agent's name "${name}"` }],
      });
    }
    return this.#store.transaction(() => {
      const agent = this.require(tenantId, projectId, name);
      if (agent.dslContent !== source) throw new ParleyError('CONFLICT', 'The working copy changed while compiling; try again');
      const now = new Date().toISOString();
      const version: AgentVersion = {
        tenantId, projectId, agentName: name, version: agent.versionCount + 1, dslContent: source,
        program: result.program, createdAt: now, createdBy,
      };
      this.#versions.putSync([tenantId, projectId, name, version.version], version);
      this.#agents.putSync([tenantId, projectId, name], { ...agent, versionCount: version.version, updatedAt: now });
      return version;
    });
  }

  /** Inside Store.transaction: writes an agent record (for batch writers such as project import). */
  putSync(record: AgentRecord): void {
    this.#agents.putSync([record.tenantId, record.projectId, record.name], record);
  }

  /** Inside Store.transaction: writes a version record; the caller keeps versionCount in step. */
  putVersionSync(version: AgentVersion): void {
    this.#versions.putSync([version.tenantId, version.projectId, version.agentName, version.version], version);
  }

  /** One version, or undefined. */
  version(tenantId: string, projectId: string, name: string, version: number): AgentVersion | undefined {
    return this.#versions.get([tenantId, projectId, name, version]);
  }

  /** Versions of an agent, oldest first, without their compiled programs. */
  listVersions(tenantId: string, projectId: string, name: string): AgentVersionSummary[] {
    return this.#versions.range({ prefix: [tenantId, projectId, name] }).map(({ value }) => summarizeVersion(value));
  }
}

/** The API form of a version. */
export function summarizeVersion(v: AgentVersion): AgentVersionSummary {
  return { projectId: v.projectId, agentName: v.agentName, version: v.version, dslContent: v.dslContent, createdAt: v.createdAt, createdBy: v.createdBy };
}
