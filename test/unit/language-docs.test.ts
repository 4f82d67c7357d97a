import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { compileAgent } from '../../actors/language/index.js';

const DOC = readFileSync(new URL('../../../docs/language.md', import.meta.url), 'utf8');

/** The ```parley fenced blocks of the reference, with the line each starts on. */
function parleyBlocks(markdown: string): Array<{ line: number; source: string }> {
  const blocks: Array<{ line: number; source: string }> = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```parley') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end]!.trim() !== '```') end++;
    blocks.push({ line: start + 1, source: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

test('every ```parley example of docs/language.md compiles', () => {
  const blocks = parleyBlocks(DOC);
  assert.ok(blocks.length >= 16, `expected an example per construct, found ${blocks.length}`);
  for (const b of blocks) {
    const r = compileAgent(b.source);
    assert.ok(r.ok, `docs/language.md example at line ${b.line}: ${r.ok ? '' : JSON.stringify(r.errors)}`);
  }
});

test('the reference has an example for every construct of the language', () => {
  const all = parleyBlocks(DOC).map((b) => b.source).join('\n');
  for (const construct of ['AGENT:', 'DESCRIPTION:', 'MODEL:', 'TEMPERATURE:', 'PERSONA:', 'MEMORY:', 'KNOWLEDGE:', 'TOOLS:', 'HTTP:', 'CODE:', 'ASYNC:', 'FLOW:', 'TRIGGER:', 'GATHER:', 'CALL:', ' AS ', 'IF:', 'RESPOND:', 'ACTION_SET:', 'BUTTON:', 'SELECT:', 'TEXT_INPUT:', 'HANDOFF:', ' WHEN ', 'DELEGATE: [', 'FALLBACK:', '{{contact.']) {
    assert.ok(all.includes(construct), `no example uses ${construct}`);
  }
});
