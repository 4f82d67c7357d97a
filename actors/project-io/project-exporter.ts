import type { AgentStore } from '../agents/agent-store.js';
import type { AgentRecord, AgentVersion } from '../agents/agent-records.js';
import { compileAgent, type AgentProgram, type CompileDiagnostic } from '../language/index.js';
import {
  ARCHIVE_FORMAT_VERSION, LOCKFILE_FILE, MANIFEST_FILE, PROJECT_FILE, agentFilePath, deploymentFilePath, manifestEntry, sha256Of,
  type FolderArchive, type Lockfile, type Manifest, type ProjectFile,
} from './archive-format.js';
import { danglingReferences, programEdges, programTools, type DependencyEdge, type GraphError, type ToolRef } from './dependency-graph.js';
import { writeZip } from './zip.js';

/** The project fields an export needs (the route has already checked the tenant owns it). */
export interface ProjectInfo {
  id: string;
  name: string;
  slug: string;
}

/** Where deployment records come from (the DeploymentStore, adapted by the actor). */
export interface DeploymentSource {
  /** Every deployment of the project: its id and the record to write (its public view: no tenant id). */
  list(tenantId: string, projectId: string): readonly { id: string; record: unknown }[];
}

/** A note about something the archive does not (or cannot) carry faithfully. */
export interface ExportWarning {
  code: 'NO_DSL_CONTENT' | 'NOT_COMPILED' | 'UNCOMPILED_CHANGES' | 'COMPILE_ERROR' | 'DANGLING_REFERENCE' | 'TOOL_SECRETS_NOT_EXPORTED';
  message: string;
  agent?: string;
}

/** The spec's Preview object. */
export interface ProjectPreview {
  project: { name: string; slug: string };
  agents: { name: string; hasDslContent: boolean }[];
  tools: ToolRef[];
  dependencies: { edges: DependencyEdge[]; validation: { valid: boolean; errors: GraphError[] } };
}

/** The ZIP form of an export, base64 in the JSON reply. */
export interface ZipArchive {
  fileName: string;
  contentType: 'application/zip';
  bytes: number;
  sha256: string;
  base64: string;
}

/** An export: the folder form, its warnings and, for format zip, the archive. */
export interface ProjectExport extends FolderArchive {
  warnings: ExportWarning[];
  archive?: ZipArchive;
}

/** Options of an export. */
export interface ExportOptions {
  format: 'folder' | 'zip';
  includeDeployments: boolean;
}

interface AgentFacts {
  record: AgentRecord;
  latest: AgentVersion | undefined;
  /** Errors of the working copy; empty when it compiles. */
  workingErrors: CompileDiagnostic[];
  /** Program for the graph: the latest version's, else the compiled working copy's. */
  program: AgentProgram | undefined;
}

/** Builds previews and exports of a project from the stores. CPU-bound: runs on the project-io actor. */
export class ProjectExporter {
  readonly #agents: AgentStore;
  readonly #deployments: DeploymentSource;

  constructor(agents: AgentStore, deployments: DeploymentSource) {
    this.#agents = agents;
    this.#deployments = deployments;
  }

  /** The agents, declared tools and dependency graph of a project, with its validation. */
  preview(tenantId: string, project: ProjectInfo): ProjectPreview {
    const facts = this.#facts(tenantId, project.id);
    const { edges, tools, errors } = graphOf(facts);
    for (const f of facts) {
      const first = f.workingErrors[0];
      if (!f.program && first) errors.push({ code: 'COMPILE_ERROR', agent: f.record.name, line: first.line, column: first.column, message: `Agent "${f.record.name}" has no version and its working copy does not compile: line ${first.line}, column ${first.column}: ${first.message}` });
    }
    return {
      project: { name: project.name, slug: project.slug },
      agents: facts.map((f) => ({ name: f.record.name, hasDslContent: hasContent(f.record.dslContent) })),
      tools,
      dependencies: { edges, validation: { valid: errors.length === 0, errors } },
    };
  }

  /** The folder form of the project (and the ZIP when asked), with warnings. */
  export(tenantId: string, project: ProjectInfo, options: ExportOptions, now = new Date()): ProjectExport {
    const facts = this.#facts(tenantId, project.id);
    const warnings: ExportWarning[] = [];
    const files: Record<string, string> = {};
    const lockfile: Lockfile = { agents: {} };
    const projectFile: ProjectFile = { formatVersion: ARCHIVE_FORMAT_VERSION, project: { name: project.name, slug: project.slug }, agents: {} };

    for (const { record, latest, workingErrors } of facts) {
      const name = record.name;
      files[agentFilePath(name)] = record.dslContent;
      projectFile.agents[name] = { description: record.description };
      lockfile.agents[name] = latest ? { version: latest.version, sha256: sha256Of(latest.dslContent) } : { version: null, sha256: null };
      const first = workingErrors[0];
      if (!hasContent(record.dslContent)) {
        warnings.push({ code: 'NO_DSL_CONTENT', agent: name, message: `Agent "${name}" has no DSL content; importing this archive will be refused until it has` });
      } else if (first) {
        warnings.push({ code: 'COMPILE_ERROR', agent: name, message: `The working copy of agent "${name}" does not compile (line ${first.line}, column ${first.column}: ${first.message}); importing this archive will be refused` });
      }
      if (!latest) {
        warnings.push({ code: 'NOT_COMPILED', agent: name, message: `Agent "${name}" has no compiled version; the lockfile pins none and an import creates no version for it` });
      } else if (latest.dslContent !== record.dslContent) {
        warnings.push({ code: 'UNCOMPILED_CHANGES', agent: name, message: `The working copy of agent "${name}" differs from its version ${latest.version}; the archive carries the working copy, so an import creates no version for it` });
      }
    }
    const { tools, errors } = graphOf(facts);
    for (const e of errors) warnings.push({ code: 'DANGLING_REFERENCE', agent: e.agent, message: e.message });
    if (tools.length > 0) {
      warnings.push({ code: 'TOOL_SECRETS_NOT_EXPORTED', message: `Tool secrets are never exported; create the secrets of ${tools.map((t) => t.name).join(', ')} in the target project` });
    }
    if (options.includeDeployments) {
      for (const d of this.#deployments.list(tenantId, project.id)) files[deploymentFilePath(d.id)] = toJsonText(d.record);
    }
    files[PROJECT_FILE] = toJsonText(projectFile);

    const paths = Object.keys(files).sort();
    const sorted: Record<string, string> = {};
    for (const p of paths) sorted[p] = files[p]!;
    const manifest: Manifest = {
      formatVersion: ARCHIVE_FORMAT_VERSION,
      project: { name: project.name, slug: project.slug },
      exportedAt: now.toISOString(),
      files: paths.map((p) => manifestEntry(p, sorted[p]!)),
    };
    const result: ProjectExport = { manifest, lockfile, files: sorted, warnings };
    if (options.format === 'zip') {
      const zip = writeZip(
        [
          { path: MANIFEST_FILE, data: Buffer.from(toJsonText(manifest)) },
          { path: LOCKFILE_FILE, data: Buffer.from(toJsonText(lockfile)) },
          ...paths.map((p) => ({ path: p, data: Buffer.from(sorted[p]!, 'utf8') })),
        ],
        now,
      );
      result.archive = {
        fileName: `${project.slug}-${now.toISOString().slice(0, 10)}.zip`, contentType: 'application/zip',
        bytes: zip.length, sha256: sha256Of(zip), base64: zip.toString('base64'),
      };
    }
    return result;
  }

  #facts(tenantId: string, projectId: string): AgentFacts[] {
    return this.#agents.list(tenantId, projectId).map((record) => {
      const latest = record.versionCount > 0 ? this.#agents.version(tenantId, projectId, record.name, record.versionCount) : undefined;
      const compiled = compileAgent(record.dslContent);
      return {
        record, latest,
        workingErrors: compiled.ok ? [] : compiled.errors,
        program: latest?.program ?? (compiled.ok ? compiled.program : undefined),
      };
    });
  }
}

function graphOf(facts: readonly AgentFacts[]): { edges: DependencyEdge[]; tools: ToolRef[]; errors: GraphError[] } {
  const edges: DependencyEdge[] = [];
  const tools = new Map<string, ToolRef>();
  for (const f of facts) {
    if (!f.program) continue;
    // Edges start at the stored agent's name, whatever the AGENT line of an uncompiled copy says.
    for (const e of programEdges(f.program)) edges.push({ ...e, from: f.record.name });
    for (const t of programTools(f.program)) if (!tools.has(t.name)) tools.set(t.name, t);
  }
  const errors = danglingReferences(edges, new Set(facts.map((f) => f.record.name)));
  return { edges, tools: [...tools.values()].sort((a, b) => a.name.localeCompare(b.name)), errors };
}

function hasContent(dsl: string): boolean {
  return dsl.trim().length > 0;
}

/** Pretty JSON with a final newline, so exported files diff well. */
export function toJsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
