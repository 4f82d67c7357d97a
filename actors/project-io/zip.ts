import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { ParleyError } from '../../runtime/index.js';

/** One file of a ZIP archive. */
export interface ZipEntry {
  /** Forward-slash relative path, e.g. `agents/greeter.agent`. */
  path: string;
  data: Buffer;
}

/** Bounds of a ZIP read; anything past them is refused before (or while) inflating. */
export interface ZipLimits {
  /** Most file entries accepted. */
  maxEntries: number;
  /** Largest sum of uncompressed sizes accepted, in bytes. */
  maxTotalBytes: number;
}

/** Defaults sized for project archives (agents are at most 256 KB each). */
export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 10_000, maxTotalBytes: 64 * 1024 * 1024 };

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const STORED = 0;
const DEFLATE = 8;
const FLAG_ENCRYPTED = 0x0001;
const FLAG_UTF8 = 0x0800;
const MAX_COMMENT = 0xffff;
const EOCD_SIZE = 22;

/**
 * True for a path that stays inside the archive's folder: relative, forward slashes only, no
 * empty, `.` or `..` segments, no drive letter, no control characters.
 */
export function isSafeArchivePath(path: string): boolean {
  if (path.length === 0 || path.length > 512) return false;
  if (path.startsWith('/') || path.includes('\\') || /^[A-Za-z]:/.test(path)) return false;
  if (/[\u0000-\u001f\u007f]/.test(path)) return false;
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** Writes a ZIP archive; each entry is deflated when that makes it smaller, else stored. */
export function writeZip(entries: readonly ZipEntry[], modified = new Date()): Buffer {
  const { time, date } = dosDateTime(modified);
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    if (!isSafeArchivePath(entry.path)) throw new Error(`Unsafe archive path ${JSON.stringify(entry.path)}`);
    const name = Buffer.from(entry.path, 'utf8');
    const deflated = deflateRawSync(entry.data);
    const useDeflate = deflated.length < entry.data.length;
    const payload = useDeflate ? deflated : entry.data;
    const crc = crc32(entry.data) >>> 0;
    if (payload.length >= 0xffffffff || entry.data.length >= 0xffffffff || offset >= 0xffffffff) throw new Error('ZIP64 archives are not supported');

    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL_HEADER, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    local.writeUInt16LE(FLAG_UTF8, 6);
    local.writeUInt16LE(useDeflate ? DEFLATE : STORED, 8);
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(payload.length, 18);
    local.writeUInt32LE(entry.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(CENTRAL_HEADER, 0);
    central.writeUInt16LE(0x0314, 4); // made by: Unix, 2.0 (so unzip honours the permission bits)
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(FLAG_UTF8, 8);
    central.writeUInt16LE(useDeflate ? DEFLATE : STORED, 10);
    central.writeUInt16LE(time, 12);
    central.writeUInt16LE(date, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(payload.length, 20);
    central.writeUInt32LE(entry.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // external attributes: regular file, rw-r--r--
    central.writeUInt32LE(offset, 42);

    locals.push(local, name, payload);
    centrals.push(central, name);
    offset += local.length + name.length + payload.length;
  }
  const centralSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(EOCD_SIZE);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

/**
 * Reads a ZIP archive into its file entries (directory entries are skipped). Refuses with a
 * BAD_REQUEST: a malformed archive, ZIP64, encryption, methods other than stored and deflate,
 * unsafe or duplicate paths, more than `maxEntries` files, more than `maxTotalBytes` uncompressed
 * (checked against the declared sizes first and enforced while inflating, so a lying header
 * cannot inflate past it), and CRC mismatches.
 */
export function readZip(zip: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipEntry[] {
  const eocd = findEndOfCentralDirectory(zip);
  const count = zip.readUInt16LE(eocd + 10);
  const centralSize = zip.readUInt32LE(eocd + 12);
  const centralOffset = zip.readUInt32LE(eocd + 16);
  if (count === 0xffff || centralOffset === 0xffffffff) bad('ZIP64 archives are not supported');
  if (count > limits.maxEntries) bad(`The archive has more than ${limits.maxEntries} entries`);
  if (centralOffset + centralSize > eocd) bad('The archive is malformed (central directory out of range)');

  const entries: ZipEntry[] = [];
  const seen = new Set<string>();
  let total = 0;
  let p = centralOffset;
  for (let i = 0; i < count; i++) {
    need(zip, p, 46);
    if (zip.readUInt32LE(p) !== CENTRAL_HEADER) bad('The archive is malformed (bad central directory entry)');
    const flags = zip.readUInt16LE(p + 8);
    const method = zip.readUInt16LE(p + 10);
    const crc = zip.readUInt32LE(p + 16);
    const compressedSize = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLength = zip.readUInt16LE(p + 28);
    const extraLength = zip.readUInt16LE(p + 30);
    const commentLength = zip.readUInt16LE(p + 32);
    const localOffset = zip.readUInt32LE(p + 42);
    need(zip, p + 46, nameLength);
    const path = decodeName(zip.subarray(p + 46, p + 46 + nameLength));
    p += 46 + nameLength + extraLength + commentLength;

    if (compressedSize === 0xffffffff || size === 0xffffffff || localOffset === 0xffffffff) bad('ZIP64 archives are not supported');
    if (path.endsWith('/')) {
      if (!isSafeArchivePath(path.slice(0, -1))) bad(`Unsafe path in archive: ${JSON.stringify(path)}`);
      continue;
    }
    if (!isSafeArchivePath(path)) bad(`Unsafe path in archive: ${JSON.stringify(path)}`);
    if (seen.has(path)) bad(`Duplicate path in archive: ${path}`);
    seen.add(path);
    if (flags & FLAG_ENCRYPTED) bad(`Encrypted entries are not supported: ${path}`);
    if (method !== STORED && method !== DEFLATE) bad(`Unsupported compression method ${method}: ${path}`);
    total += size;
    if (total > limits.maxTotalBytes) bad(`The archive expands to more than ${limits.maxTotalBytes} bytes`);

    need(zip, localOffset, 30);
    if (zip.readUInt32LE(localOffset) !== LOCAL_HEADER) bad(`The archive is malformed (bad local header): ${path}`);
    const dataStart = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    need(zip, dataStart, compressedSize);
    const raw = zip.subarray(dataStart, dataStart + compressedSize);
    let data: Buffer;
    if (method === STORED) {
      if (compressedSize !== size) bad(`The archive is malformed (stored sizes differ): ${path}`);
      data = raw;
    } else {
      try {
        // One byte over the declared size is enough to prove the header lied.
        data = inflateRawSync(raw, { maxOutputLength: Math.max(1, size + 1) });
      } catch {
        bad(`Entry ${path} does not inflate to its declared size`);
      }
      if (data.length !== size) bad(`Entry ${path} does not inflate to its declared size`);
    }
    if ((crc32(data) >>> 0) !== crc) bad(`CRC mismatch in ${path}`);
    entries.push({ path, data });
  }
  return entries;
}

function findEndOfCentralDirectory(zip: Buffer): number {
  const stop = Math.max(0, zip.length - EOCD_SIZE - MAX_COMMENT);
  for (let i = zip.length - EOCD_SIZE; i >= stop; i--) {
    if (zip.readUInt32LE(i) === END_OF_CENTRAL_DIRECTORY && i + EOCD_SIZE + zip.readUInt16LE(i + 20) === zip.length) return i;
  }
  return bad('Not a ZIP archive (no end of central directory)');
}

function decodeName(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return bad('An archive path is not valid UTF-8');
  }
}

function need(zip: Buffer, offset: number, length: number): void {
  if (offset < 0 || offset + length > zip.length) bad('The archive is malformed (truncated)');
}

function bad(message: string): never {
  throw new ParleyError('BAD_REQUEST', message);
}

function dosDateTime(d: Date): { time: number; date: number } {
  const year = Math.min(Math.max(d.getUTCFullYear(), 1980), 2107);
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}
