import { ParleyError } from '../../runtime/index.js';
import { LOCKFILE_FILE, MANIFEST_FILE, sha256Of, type LockEntry, type Lockfile, type Manifest, type ManifestFile } from './archive-format.js';
import { isSafeArchivePath, readZip } from './zip.js';

/** An archive whose every file matched its manifest checksum, decoded to text. */
export interface VerifiedArchive {
  manifest: Manifest;
  lockfile: Lockfile;
  /** Path -> UTF-8 content, in path order. */
  files: Map<string, string>;
}

const HEX64 = /^[0-9a-f]{64}$/;
// An export reply can be posted back as it is: its success, warnings and archive fields are ignored.
const FOLDER_FIELDS = new Set(['manifest', 'lockfile', 'files', 'success', 'warnings', 'archive']);

/**
 * Reads an import body (the folder form as JSON, or a ZIP) and verifies it: manifest shape, a
 * checksum and size for every file, no file missing from or absent in the manifest, safe
 * paths, UTF-8 text. Every refusal is a BAD_REQUEST naming the file at fault.
 */
export function readArchive(body: Buffer, contentType: string): VerifiedArchive {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  let rawManifest: unknown;
  let rawLockfile: unknown;
  const files = new Map<string, Buffer>();
  if (type === 'application/json') {
    const doc = parseJson(body, 'The request body');
    if (!isObject(doc)) bad('The request body must be a JSON object {manifest, lockfile, files}');
    for (const key of Object.keys(doc)) if (!FOLDER_FIELDS.has(key)) bad(`Unknown field "${key}"`, { field: key });
    rawManifest = doc['manifest'];
    rawLockfile = doc['lockfile'];
    const given = doc['files'];
    if (!isObject(given)) bad('files must be an object mapping paths to content strings', { field: 'files' });
    for (const [path, content] of Object.entries(given)) {
      if (typeof content !== 'string') bad(`The content of ${path} must be a string`, { file: path });
      files.set(path, Buffer.from(content, 'utf8'));
    }
  } else if (type === 'application/zip') {
    for (const entry of readZip(body)) {
      if (entry.path === MANIFEST_FILE) rawManifest = parseJson(entry.data, MANIFEST_FILE);
      else if (entry.path === LOCKFILE_FILE) rawLockfile = parseJson(entry.data, LOCKFILE_FILE);
      else files.set(entry.path, entry.data);
    }
    if (rawManifest === undefined) bad(`The archive has no ${MANIFEST_FILE}`, { file: MANIFEST_FILE });
    if (rawLockfile === undefined) bad(`The archive has no ${LOCKFILE_FILE}`, { file: LOCKFILE_FILE });
  } else {
    bad('Content-Type must be application/json (the folder form) or application/zip', { field: 'content-type' });
  }

  const manifest = checkManifest(rawManifest);
  const lockfile = checkLockfile(rawLockfile);
  const listed = new Map<string, ManifestFile>(manifest.files.map((f) => [f.path, f]));
  for (const path of files.keys()) {
    if (!isSafeArchivePath(path)) bad(`Unsafe path in archive: ${JSON.stringify(path)}`, { file: path });
    if (!listed.has(path)) bad(`${path} is not listed in the manifest`, { file: path });
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const text = new Map<string, string>();
  for (const entry of [...listed.values()].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const data = files.get(entry.path);
    if (!data) bad(`The manifest lists ${entry.path}, but the archive does not contain it`, { file: entry.path });
    if (data.length !== entry.bytes || sha256Of(data) !== entry.sha256) bad(`Checksum mismatch for ${entry.path}: the file was changed after export`, { file: entry.path });
    try {
      text.set(entry.path, decoder.decode(data));
    } catch {
      bad(`${entry.path} is not UTF-8 text`, { file: entry.path });
    }
  }
  return { manifest, lockfile, files: text };
}

function checkManifest(value: unknown): Manifest {
  const where = { file: MANIFEST_FILE };
  if (!isObject(value)) bad('manifest must be an object', where);
  if (value['formatVersion'] !== 1) bad(`manifest.formatVersion ${JSON.stringify(value['formatVersion'])} is not supported (expected 1)`, where);
  const project = value['project'];
  if (!isObject(project) || typeof project['name'] !== 'string' || typeof project['slug'] !== 'string') bad('manifest.project must be {name, slug}', where);
  if (typeof value['exportedAt'] !== 'string') bad('manifest.exportedAt must be a string', where);
  const list = value['files'];
  if (!Array.isArray(list)) bad('manifest.files must be an array', where);
  const seen = new Set<string>();
  const files: ManifestFile[] = list.map((f: unknown, i: number) => {
    if (!isObject(f) || typeof f['path'] !== 'string' || typeof f['sha256'] !== 'string' || !HEX64.test(f['sha256']) || !Number.isSafeInteger(f['bytes']) || (f['bytes'] as number) < 0) {
      bad(`manifest.files[${i}] must be {path, sha256 (64 lower-case hex digits), bytes}`, where);
    }
    const path = f['path'] as string;
    if (!isSafeArchivePath(path)) bad(`Unsafe path in manifest: ${JSON.stringify(path)}`, { file: path });
    if (path === MANIFEST_FILE || path === LOCKFILE_FILE) bad(`manifest.files may not list ${path}`, where);
    if (seen.has(path)) bad(`manifest.files lists ${path} twice`, where);
    seen.add(path);
    return { path, sha256: f['sha256'] as string, bytes: f['bytes'] as number };
  });
  return { formatVersion: 1, project: { name: project['name'], slug: project['slug'] }, exportedAt: value['exportedAt'], files };
}

function checkLockfile(value: unknown): Lockfile {
  const where = { file: LOCKFILE_FILE };
  if (!isObject(value) || !isObject(value['agents'])) bad('lockfile must be {agents: {name: {version, sha256}}}', where);
  const agents: Record<string, LockEntry> = {};
  for (const [name, entry] of Object.entries(value['agents'])) {
    const ok = isObject(entry)
      && (entry['version'] === null || (Number.isSafeInteger(entry['version']) && (entry['version'] as number) >= 1))
      && (entry['sha256'] === null || (typeof entry['sha256'] === 'string' && HEX64.test(entry['sha256'])))
      && (entry['version'] === null) === (entry['sha256'] === null);
    if (!ok) bad(`lockfile.agents.${name} must be {version, sha256}, both null or both set`, where);
    agents[name] = { version: entry['version'] as number | null, sha256: entry['sha256'] as string | null };
  }
  return { agents };
}

function parseJson(data: Buffer, what: string): unknown {
  try {
    return JSON.parse(data.toString('utf8'));
  } catch {
    return bad(`${what} is not valid JSON`, what === 'The request body' ? undefined : { file: what });
  }
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function bad(message: string, details?: Record<string, unknown>): never {
  throw new ParleyError('BAD_REQUEST', message, details);
}
