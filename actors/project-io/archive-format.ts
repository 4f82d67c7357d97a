import { createHash } from 'node:crypto';
import { AGENT_NAME } from '../agents/agent-store.js';

/** Version of the archive layout; an import refuses any other. */
export const ARCHIVE_FORMAT_VERSION = 1;
/** Project metadata file (name, slug, agent descriptions). */
export const PROJECT_FILE = 'parley.json';
/** Where the manifest lives inside a ZIP (the folder form carries it as a field). */
export const MANIFEST_FILE = 'manifest.json';
/** Where the lockfile lives inside a ZIP (the folder form carries it as a field). */
export const LOCKFILE_FILE = 'parley.lock.json';

/** One checksummed file of the archive. */
export interface ManifestFile {
  path: string;
  sha256: string;
  bytes: number;
}

/** Metadata and checksums of every file in `files` (not of the manifest or lockfile themselves). */
export interface Manifest {
  formatVersion: number;
  project: { name: string; slug: string };
  exportedAt: string;
  files: ManifestFile[];
}

/** The compiled version of each agent at export time; version and sha256 are null for an agent never compiled. */
export interface LockEntry {
  version: number | null;
  /** sha256 of that version's DSL source. */
  sha256: string | null;
}

/** Pinned agent versions. */
export interface Lockfile {
  agents: Record<string, LockEntry>;
}

/** Contents of parley.json. */
export interface ProjectFile {
  formatVersion: number;
  project: { name: string; slug: string };
  agents: Record<string, { description: string | null }>;
}

/** The folder form: what GET export returns and what POST import takes as JSON. */
export interface FolderArchive {
  manifest: Manifest;
  lockfile: Lockfile;
  /** Path -> UTF-8 content. */
  files: Record<string, string>;
}

/** Path of an agent's source file. */
export function agentFilePath(name: string): string {
  return `agents/${name}.agent`;
}

/** Path of a deployment record. */
export function deploymentFilePath(id: string): string {
  return `deployments/${id}.json`;
}

/** The agent name of an `agents/<name>.agent` path, or undefined for any other path. */
export function agentNameOfPath(path: string): string | undefined {
  const m = /^agents\/([^/]+)\.agent$/.exec(path);
  return m && AGENT_NAME.test(m[1]!) ? m[1] : undefined;
}

/** True for `deployments/<id>.json`. */
export function isDeploymentPath(path: string): boolean {
  return /^deployments\/[A-Za-z0-9_-]{1,128}\.json$/.test(path);
}

/** Lower-case hex sha256 of text (as UTF-8) or bytes. */
export function sha256Of(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

/** The manifest entry of a file. */
export function manifestEntry(path: string, content: string): ManifestFile {
  return { path, sha256: sha256Of(content), bytes: Buffer.byteLength(content, 'utf8') };
}
