import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { crc32, deflateRawSync } from 'node:zlib';
import { isSafeArchivePath, readZip, writeZip, type ZipEntry } from '../../actors/project-io/internal.js';
import { ParleyError } from '../../runtime/index.js';

const hasUnzip = spawnSync('unzip', ['-v']).status === 0;

/** A one-entry archive with a hand-written header, for archives writeZip refuses to make. */
function rawZip(path: string, data: Buffer, options: { method?: number; declaredSize?: number; payload?: Buffer } = {}): Buffer {
  const name = Buffer.from(path, 'utf8');
  const method = options.method ?? 0;
  const payload = options.payload ?? (method === 8 ? deflateRawSync(data) : data);
  const size = options.declaredSize ?? data.length;
  const crc = crc32(data) >>> 0;
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(method, 8);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(payload.length, 18);
  local.writeUInt32LE(size, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(method, 10);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(payload.length, 20);
  central.writeUInt32LE(size, 24);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt32LE(0, 42);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(local.length + name.length + payload.length, 16);
  return Buffer.concat([local, name, payload, central, name, end]);
}

function refused(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err: unknown) => err instanceof ParleyError && err.code === 'BAD_REQUEST' && message.test(err.message));
}

const sample: ZipEntry[] = [
  { path: 'manifest.json', data: Buffer.from('{"a":1}\n') },
  { path: 'agents/greeter.agent', data: Buffer.from('AGENT: greeter\n'.repeat(200)) },
  { path: 'agents/ünïcode_ok.agent', data: Buffer.from('héllo wörld') },
  { path: 'empty.txt', data: Buffer.alloc(0) },
];

test('writeZip then readZip returns the same entries (stored and deflated)', () => {
  const zip = writeZip(sample);
  const back = readZip(zip);
  assert.deepEqual(back.map((e) => e.path), sample.map((e) => e.path));
  for (let i = 0; i < sample.length; i++) assert.ok(back[i]!.data.equals(sample[i]!.data), sample[i]!.path);
  // The repeated agent deflates: the archive is smaller than its content.
  assert.ok(zip.length < sample.reduce((n, e) => n + e.data.length, 0));
});

test('the system unzip reads what writeZip writes', (t) => {
  if (!hasUnzip) {
    t.diagnostic('unzip is not installed on this machine: the cross-check with it is skipped');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'parley-zip-'));
  try {
    const file = join(dir, 'a.zip');
    writeFileSync(file, writeZip(sample));
    const listing = execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).trim().split('\n');
    assert.deepEqual(listing, sample.map((e) => e.path));
    execFileSync('unzip', ['-qt', file]);
    execFileSync('unzip', ['-q', file, '-d', join(dir, 'out')]);
    assert.equal(readFileSync(join(dir, 'out', 'agents', 'greeter.agent'), 'utf8'), sample[1]!.data.toString());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('readZip reads an archive made by the system zip', (t) => {
  if (spawnSync('zip', ['-v']).status !== 0) {
    t.diagnostic('zip is not installed on this machine: reading its output is skipped');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'parley-zip-'));
  try {
    writeFileSync(join(dir, 'one.txt'), 'one '.repeat(1000));
    writeFileSync(join(dir, 'two.txt'), 'two');
    execFileSync('zip', ['-q', '-r', 'a.zip', 'one.txt', 'two.txt'], { cwd: dir });
    const entries = readZip(readFileSync(join(dir, 'a.zip')));
    assert.deepEqual(entries.map((e) => [e.path, e.data.toString()]), [['one.txt', 'one '.repeat(1000)], ['two.txt', 'two']]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('paths that leave the folder are refused', () => {
  for (const bad of ['../evil', 'a/../../evil', '/etc/passwd', 'C:/x', 'a\\b', 'a//b', './a', '']) assert.equal(isSafeArchivePath(bad), false, bad);
  assert.equal(isSafeArchivePath('agents/a.agent'), true);
  refused(() => readZip(rawZip('../evil.txt', Buffer.from('x'))), /Unsafe path/);
  refused(() => readZip(rawZip('/abs.txt', Buffer.from('x'))), /Unsafe path/);
  assert.throws(() => writeZip([{ path: '../x', data: Buffer.alloc(1) }]), /Unsafe archive path/);
});

test('a zip bomb is refused: by declared size, and when the header lies about it', () => {
  const big = Buffer.alloc(2 * 1024 * 1024); // 2 MB of zeros deflates to ~2 KB
  const limits = { maxEntries: 10, maxTotalBytes: 1024 * 1024 };
  refused(() => readZip(rawZip('bomb.bin', big, { method: 8 }), limits), /expands to more than/);
  // Declares 10 bytes but inflates to 2 MB: inflating stops at 11 bytes.
  refused(() => readZip(rawZip('bomb.bin', big, { method: 8, declaredSize: 10 }), limits), /does not inflate to its declared size/);
});

test('too many entries, a bad CRC, an unknown method and garbage are refused', () => {
  const many = Array.from({ length: 11 }, (_, i) => ({ path: `f${i}`, data: Buffer.from('x') }));
  refused(() => readZip(writeZip(many), { maxEntries: 10, maxTotalBytes: 1024 }), /more than 10 entries/);
  const zip = writeZip([{ path: 'a.txt', data: Buffer.from('abc') }]);
  zip[30 + 'a.txt'.length] = 'x'.charCodeAt(0); // change the stored data byte
  refused(() => readZip(zip), /CRC mismatch/);
  refused(() => readZip(rawZip('a.txt', Buffer.from('abc'), { method: 12 })), /compression method 12/);
  refused(() => readZip(Buffer.from('not a zip at all, just some text')), /Not a ZIP/);
  refused(() => readZip(writeZip(sample).subarray(0, 200)), /Not a ZIP|malformed/);
});
