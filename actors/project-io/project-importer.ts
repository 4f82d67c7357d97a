import { ParleyError, cuid, type Store } from '../../runtime/index.js';
import type { AgentRecord, AgentVersion } from '../agents/agent-records.js';
import { AgentStore, MAX_DSL_LENGTH } from '../agents/agent-store.js';
import { compileAgent, type AgentProgram } from '../language/index.js';
import { PROJECT_FILE, agentNameOfPath, isDeploymentPath, sha256Of } from './archive-format.js';
import type { VerifiedArchive } from './archive-reader.js';
import { danglingReferences, programEdges } from './dependency-graph.js';

/** How an import treats the target project. Only `merge` exists: agents not in the archive are left alone. */
export type ImportMode = 'merge';

/** Options of an import. */
export interface ImportOptions {
  mode: ImportMode;
  /** Validate and report what would change, writing nothing. */
  dryRun: boolean;
  /** Principal recorded as the creator of versions made by the import. */
  createdBy: string | null;
}

/** A note about something the import skipped or could not check. */
export interface ImportWarning {
  code: 'DEPLOYMENTS_NOT_IMPORTED' | 'UNKNOWN_FILE' | 'DANGLING_REFERENCE' | 'LOCKED_VERSION_NOT_IN_ARCHIVE';
  message: string;
  file?: string;
  agent?: string;
}

/** What an import did (or, with dryRun, would do). */
export interface ImportResult {
  dryRun: boolean;
  created: string[];
  updated: string[];
  unchanged: string[];
  /** Versions compiled by the import (agents whose lockfile pin matches the archived source). */
  versions: { agent: string; version: number }[];
  warnings: ImportWarning[];
}

interface ImportedAgent {
  name: string;
  file: string;
  dslContent: string;
  program: AgentProgram;
  /** undefined: keep the target's description (parley.json does not mention the agent). */
  description: string | null | undefined;
  /** The lockfile pins a version whose source is exactly this file. */
  pinned: boolean;
}

/**
 * Validates a verified archive and applies it to a project: every agent must compile and be named
 * after its file, then all agent writes happen in one store transaction, so a refused or failed
 * import changes nothing. Agent records are written directly (keys as AgentStore lays them out:
 * [tenantId, projectId, name(, version)]) because AgentStore's methods each run their own transaction.
 */
export class ProjectImporter {
  readonly #store: Store;
  readonly #agents: AgentStore;

  constructor(store: Store) {
    this.#store = store;
    this.#agents = new AgentStore(store);
  }

  /** Validates the archive, then (unless dryRun) applies it atomically. */
  async import(tenantId: string, projectId: string, archive: VerifiedArchive, options: ImportOptions): Promise<ImportResult> {
    const warnings: ImportWarning[] = [];
    const agents = this.#validate(archive, warnings);
    const existing = new Set(this.#agents.list(tenantId, projectId).map((a) => a.name));
    const known = new Set([...existing, ...agents.map((a) => a.name)]);
    for (const a of agents) {
      for (const e of danglingReferences(programEdges(a.program), known)) warnings.push({ code: 'DANGLING_REFERENCE', agent: a.name, file: a.file, message: e.message });
    }
    if (options.dryRun) return { dryRun: true, ...this.#apply(tenantId, projectId, agents, options, false), warnings };
    const applied = await this.#store.transaction(() => this.#apply(tenantId, projectId, agents, options, true));
    return { dryRun: false, ...applied, warnings };
  }

  #validate(archive: VerifiedArchive, warnings: ImportWarning[]): ImportedAgent[] {
    const projectText = archive.files.get(PROJECT_FILE);
    if (projectText === undefined) throw new ParleyError('BAD_REQUEST', `The archive has no ${PROJECT_FILE}`, { file: PROJECT_FILE });
    const descriptions = readDescriptions(projectText);
    const agents: ImportedAgent[] = [];
    for (const [file, content] of archive.files) {
      if (file === PROJECT_FILE) continue;
      if (isDeploymentPath(file)) {
        warnings.push({ code: 'DEPLOYMENTS_NOT_IMPORTED', file, message: `${file} was verified but not imported: deployments are recreated in the target project, not imported` });
        continue;
      }
      const name = agentNameOfPath(file);
      if (name === undefined && file.startsWith('agents/')) {
        throw new ParleyError('BAD_REQUEST', `${file}: agent files are agents/<name>.agent, where the name uses lower-case letters, digits and _ and starts with a letter`, { file });
      }
      if (name === undefined) {
        warnings.push({ code: 'UNKNOWN_FILE', file, message: `${file} is not part of the archive layout and was ignored` });
        continue;
      }
      if (content.trim().length === 0) throw compileError(file, 1, 1, 'The agent has no DSL content');
      if (content.length > MAX_DSL_LENGTH) throw compileError(file, 1, 1, `The agent is longer than ${MAX_DSL_LENGTH} characters`);
      const compiled = compileAgent(content);
      if (!compiled.ok) {
        const first = compiled.errors[0]!;
        throw compileError(file, first.line, first.column, first.message, compiled.errors);
      }
      if (compiled.program.name !== name) {
        throw compileError(file, agentLine(content), 1, `The AGENT name "${compiled.program.name}" must match the file name "${name}"`);
      }
      const lock = archive.lockfile.agents[name];
      const pinned = lock !== undefined && lock.sha256 !== null && lock.sha256 === sha256Of(content);
      if (lock && lock.sha256 !== null && !pinned) {
        warnings.push({ code: 'LOCKED_VERSION_NOT_IN_ARCHIVE', agent: name, file, message: `The lockfile pins version ${lock.version} of "${name}", whose source is not the archived working copy: no version was created` });
      }
      agents.push({ name, file, dslContent: content, program: compiled.program, description: descriptions.get(name), pinned });
    }
    for (const name of Object.keys(archive.lockfile.agents)) {
      if (!agents.some((a) => a.name === name)) throw new ParleyError('BAD_REQUEST', `The lockfile pins agent "${name}", which has no file in the archive`, { file: 'lockfile' });
    }
    return agents;
  }

  /** Plans the writes against the current records; with `write`, performs them (inside the transaction). */
  #apply(tenantId: string, projectId: string, agents: readonly ImportedAgent[], options: ImportOptions, write: boolean): Omit<ImportResult, 'dryRun' | 'warnings'> {
    const result = { created: [] as string[], updated: [] as string[], unchanged: [] as string[], versions: [] as { agent: string; version: number }[] };
    const now = new Date().toISOString();
    for (const a of agents) {
      const current = this.#agents.get(tenantId, projectId, a.name);
      const latest = current && current.versionCount > 0 ? this.#agents.version(tenantId, projectId, a.name, current.versionCount) : undefined;
      const needsVersion = a.pinned && latest?.dslContent !== a.dslContent;
      const description = a.description === undefined ? (current?.description ?? null) : a.description;
      const versionCount = (current?.versionCount ?? 0) + (needsVersion ? 1 : 0);
      if (current && current.dslContent === a.dslContent && current.description === description && !needsVersion) {
        result.unchanged.push(a.name);
        continue;
      }
      (current ? result.updated : result.created).push(a.name);
      if (needsVersion) result.versions.push({ agent: a.name, version: versionCount });
      if (!write) continue;
      const record: AgentRecord = current
        ? { ...current, dslContent: a.dslContent, description, versionCount, updatedAt: now }
        : { id: cuid(), tenantId, projectId, name: a.name, description, dslContent: a.dslContent, versionCount, createdAt: now, updatedAt: now };
      this.#agents.putSync(record);
      if (needsVersion) {
        const version: AgentVersion = { tenantId, projectId, agentName: a.name, version: versionCount, dslContent: a.dslContent, program: a.program, createdAt: now, createdBy: options.createdBy };
        this.#agents.putVersionSync(version);
      }
    }
    return result;
  }
}

/** Descriptions from parley.json, by agent name. */
function readDescriptions(text: string): Map<string, string | null> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ParleyError('BAD_REQUEST', `${PROJECT_FILE} is not valid JSON`, { file: PROJECT_FILE });
  }
  const agents = (doc as { agents?: unknown } | null)?.agents;
  if (typeof doc !== 'object' || doc === null || (doc as { formatVersion?: unknown }).formatVersion !== 1 || typeof agents !== 'object' || agents === null || Array.isArray(agents)) {
    throw new ParleyError('BAD_REQUEST', `${PROJECT_FILE} must be {formatVersion: 1, project, agents}`, { file: PROJECT_FILE });
  }
  const out = new Map<string, string | null>();
  for (const [name, entry] of Object.entries(agents)) {
    const description = (entry as { description?: unknown } | null)?.description;
    if (description !== null && (typeof description !== 'string' || description.length > 2000)) {
      throw new ParleyError('BAD_REQUEST', `${PROJECT_FILE}: agents.${name}.description must be a string of at most 2000 characters or null`, { file: PROJECT_FILE });
    }
    out.set(name, description);
  }
  return out;
}

/** The 400 for an agent file that does not compile: message and details name file, line and column. */
function compileError(file: string, line: number, column: number, message: string, errors?: readonly { line: number; column: number; message: string }[]): ParleyError {
  return new ParleyError('VALIDATION_ERROR', `${file}: line ${line}, column ${column}: ${message}`, { file, line, column, errors: errors ?? [{ line, column, message }] });
}

/** 1-based line of the AGENT: header (1 when absent). */
function agentLine(source: string): number {
  const index = source.split(/\r\n|\r|\n/).findIndex((l) => /^\s*AGENT\s*:/.test(l));
  return index === -1 ? 1 : index + 1;
}
