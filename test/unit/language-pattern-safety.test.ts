import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileAgent, initialState, runTurn } from '../../actors/language/index.js';
import { buildSafeRegExp, foldCase } from '../../actors/language/internal.js';
import { compileOrThrow, testHost } from '../fixtures/language/host.js';

const agent = (pattern: string): string => `AGENT: probe\nFLOW: f\n  TRIGGER: pattern ${pattern}\n  RESPOND: "matched"\nFALLBACK: "no"\n`;

test('case folding matches exactly what the i flag matches', () => {
  const patterns = ['hello|hi', '^INV-\\d+$', '[a-f]+x', '[^a-z]', 'caf\\u00e9', '\\bRefund\\b', 'a{2,3}', '(?<word>ok)', '[\\w-]+', 'ÄBC'];
  const inputs = ['HELLO', 'Hi there', 'inv-42', 'INV-42', 'ABCX', 'q', '1', 'CAFÉ', 'café', 'REFUND now', 'AAA', 'OK', 'a-B_c', 'äbc', 'xyz'];
  for (const p of patterns) {
    const reference = new RegExp(p, 'i');
    const folded = buildSafeRegExp(p, 'i');
    assert.equal(folded.flags.includes('i'), false, `${p} must not use the i flag`);
    for (const input of inputs) assert.equal(folded.test(input), reference.test(input), `/${p}/i on "${input}" (folded: ${foldCase(p)})`);
  }
});

test('a catastrophically backtracking trigger cannot hold the thread', async () => {
  // Without the linear-time fallback this match takes longer than the age of the universe.
  const program = compileOrThrow(agent('/^(a|aa)*$/i'));
  const result = await runTurn(initialState('probe'), { message: 'a'.repeat(60) + 'b', sessionId: 's' }, testHost([program]));
  assert.equal(result.response, 'no');
  const hit = await runTurn(initialState('probe'), { message: 'a'.repeat(60), sessionId: 's' }, testHost([program]));
  assert.equal(hit.response, 'matched');
});

test('features that disable the linear-time fallback are compile errors', () => {
  const cases: Array<[string, RegExp]> = [
    ['/(a)\\1/', /refers back/],
    ['/(?<x>a)\\k<x>/', /refers back/],
    ['/foo(?=bar)/', /Look-ahead/],
    ['/(?<!x)y/', /Look-ahead/],
    ['/hello/u', /flag u/],
  ];
  for (const [pattern, message] of cases) {
    const r = compileAgent(agent(pattern));
    assert.equal(r.ok, false, pattern);
    if (!r.ok) {
      assert.match(r.errors[0]!.message, message, pattern);
      assert.equal(r.errors[0]!.line, 3, pattern);
    }
  }
});

test('an overlong pattern is refused', () => {
  const r = compileAgent(agent(`/${'a'.repeat(1001)}/`));
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.errors[0]!.message, /longer than 1000/);
});
