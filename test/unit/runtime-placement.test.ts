import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fnv1a32, shardOf } from '../../runtime/index.js';
import { decode, encode, ShardMap, workerOwner } from '../../runtime/internal.js';

function referenceFnv(key: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(key, 'utf8')) h = Math.imul(h ^ byte, 0x01000193);
  return h >>> 0;
}

test('fnv1a32 matches the published vectors and hashes UTF-8 bytes', () => {
  assert.equal(fnv1a32(''), 0x811c9dc5);
  assert.equal(fnv1a32('a'), 0xe40c292c);
  assert.equal(fnv1a32('foobar'), 0xbf9cf968);
  for (const key of ['session:é', 'ключ', '会话-42', 'emoji-😀-x', 'lone-\ud800-surrogate', 'end-\udc00', 'hi-\ud83d']) assert.equal(fnv1a32(key), referenceFnv(key), key);
  assert.equal(shardOf('foobar', 256), 0xbf9cf968 % 256);
});

test('a shard map starts balanced and moves one shard at a time', () => {
  const map = new ShardMap(8, (s) => workerOwner(s % 2));
  assert.equal(map.counts().get(workerOwner(0)), 4);
  map.assign(0, workerOwner(1));
  assert.equal(map.owner(0), workerOwner(1));
  assert.equal(map.counts().get(workerOwner(1)), 5);
});

test('the codec produces a standalone buffer that can be transferred', () => {
  const buf = encode({ type: 'tell', kind: 'k', key: 'x', shard: 3, message: { a: [1, 'b', null] } });
  const small = encode({ type: 'ping', seq: 1 });
  assert.ok(buf.byteLength < 64, `the encoded buffer is ${buf.byteLength} bytes: the msgpackr pool leaked`);
  assert.notEqual(buf, small);
  const copy = structuredClone(buf, { transfer: [buf] });
  assert.equal(buf.byteLength, 0, 'not transferred');
  assert.deepEqual(decode(copy), { type: 'tell', kind: 'k', key: 'x', shard: 3, message: { a: [1, 'b', null] } });
});
