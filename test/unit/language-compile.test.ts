import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { compileAgent, referencedAgents, runTurn, initialState, MAX_SOURCE_BYTES, type CompileDiagnostic } from '../../actors/language/index.js';
import { compileOrThrow, testHost } from '../fixtures/language/host.js';

const EXAMPLES = new URL('../../../examples/', import.meta.url);
const FIXTURES = new URL('../../../test/fixtures/language/', import.meta.url);

function errorsOf(source: string): CompileDiagnostic[] {
  const r = compileAgent(source);
  assert.equal(r.ok, false, 'expected compile errors');
  return r.ok ? [] : r.errors;
}

function hasError(errors: CompileDiagnostic[], line: number, column: number, pattern: RegExp): void {
  assert.ok(
    errors.some((e) => e.line === line && e.column === column && pattern.test(e.message)),
    `no error ${pattern} at ${line}:${column} in ${JSON.stringify(errors, null, 1)}`,
  );
}

test('every examples/*.agent compiles, and the set of examples is complete', () => {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.agent'));
  for (const needed of ['greeter.agent', 'billing_support.agent', 'human_desk.agent', 'fraud_check.agent']) assert.ok(files.includes(needed), needed);
  const names = new Set<string>();
  for (const f of files) {
    const r = compileAgent(readFileSync(new URL(f, EXAMPLES), 'utf8'));
    assert.ok(r.ok, `${f}: ${r.ok ? '' : JSON.stringify(r.errors)}`);
    assert.equal(`${r.program.name}.agent`, f, 'file name matches AGENT name');
    names.add(r.program.name);
  }
  // Every HANDOFF/DELEGATE target of an example is itself an example.
  for (const f of files) {
    const r = compileAgent(readFileSync(new URL(f, EXAMPLES), 'utf8'));
    if (r.ok) for (const target of referencedAgents(r.program)) assert.ok(names.has(target), `${f} references missing ${target}`);
  }
});

test('greeter compiles to the expected program', () => {
  const p = compileOrThrow(readFileSync(new URL('greeter.agent', EXAMPLES), 'utf8'));
  assert.equal(p.formatVersion, 2);
  assert.equal(p.name, 'greeter');
  assert.equal(p.model, 'builtin');
  assert.deepEqual(p.flows[0]!.triggers, [{ kind: 'pattern', pattern: { source: 'hello|hi', flags: 'i' } }]);
  assert.deepEqual(p.fallback, ['I only say hello.']);
  assert.ok(Object.isFrozen(p) && Object.isFrozen(p.flows[0]!.steps), 'program is deep-frozen');
});

test('billing_support keeps its constructs and references', () => {
  const p = compileOrThrow(readFileSync(new URL('billing_support.agent', EXAMPLES), 'utf8'));
  assert.equal(p.description, 'Answers billing questions and starts refunds');
  assert.equal(p.persona, 'You are a concise billing assistant.');
  assert.equal(p.knowledge.length, 3);
  assert.deepEqual(referencedAgents(p), ['fraud_check', 'human_desk']);
  const gather = p.flows[0]!.steps[0]!;
  assert.equal(gather.kind, 'gather');
  if (gather.kind === 'gather') {
    assert.deepEqual(gather.slots.map((s) => [s.name, s.type]), [['invoice_id', 'string'], ['reason', 'enum']]);
    assert.deepEqual(gather.slots[0]!.validate, { source: '^INV-\\d+$', flags: '' });
    assert.deepEqual(gather.slots[1]!.options, ['damaged', 'late', 'other']);
  }
  assert.equal(p.handoffs[0]!.target, 'human_desk');
  assert.equal(p.handoffs[0]!.condition.kind, 'or');
});

test('program is plain JSON: a round-tripped copy runs the same', async () => {
  const p = compileOrThrow(readFileSync(new URL('billing_support.agent', EXAMPLES), 'utf8'));
  const copy = JSON.parse(JSON.stringify(p));
  assert.deepEqual(copy, p);
  const human = compileOrThrow(readFileSync(new URL('human_desk.agent', EXAMPLES), 'utf8'));
  const fraud = compileOrThrow(readFileSync(new URL('fraud_check.agent', EXAMPLES), 'utf8'));
  for (const msg of ['I want a refund for INV-12, it arrived late', 'how do I pay', 'speak to a human']) {
    const a = await runTurn(initialState('billing_support'), { message: msg, sessionId: 's' }, testHost([p, human, fraud]));
    const b = await runTurn(initialState('billing_support'), { message: msg, sessionId: 's' }, testHost([copy, JSON.parse(JSON.stringify(human)), JSON.parse(JSON.stringify(fraud))]));
    assert.equal(a.response, b.response);
    assert.deepEqual(a.state, b.state);
  }
});

test('several errors in one source, each with its line and column', () => {
  const errors = compileAgent(readFileSync(new URL('many-errors.agent', FIXTURES), 'utf8'));
  assert.equal(errors.ok, false);
  if (errors.ok) return;
  const e = errors.errors;
  hasError(e, 2, 1, /Unknown section FLWO\. Did you mean FLOW\?/);
  hasError(e, 5, 12, /Put the text of RESPOND in double quotes/);
  hasError(e, 6, 3, /GATHER needs at least one slot/);
  hasError(e, 7, 7, /There is already a FLOW named refund \(on line 3\)/);
  hasError(e, 10, 14, /^Unknown slot type strng\. Did you mean string\?/);
  hasError(e, 11, 27, /^This pattern is not valid: Unterminated group/);
  hasError(e, 12, 7, /There is already a FLOW named refund \(on line 3\)/);
  hasError(e, 12, 1, /FLOW refund has no TRIGGER/);
  hasError(e, 15, 1, /RESPOND must be inside a FLOW/);
  hasError(e, 16, 1, /GATHER must be inside a FLOW/);
  hasError(e, 18, 11, /^Put the settings of tool lookup on indented lines below it/);
  hasError(e, 18, 3, /^Tool lookup needs HTTP:/);
  hasError(e, 19, 10, /cannot hand off to itself/);
  // The errors come back in source order.
  const order = e.map((d) => d.line * 1000 + d.column);
  assert.deepEqual(order, [...order].sort((a, b) => a - b));
});

test('missing AGENT is reported at line 1', () => {
  hasError(errorsOf('FLOW: x\n  TRIGGER: /x/\n  RESPOND: "x"\n'), 1, 1, /has no name\. Add a line like AGENT:/);
  hasError(errorsOf(''), 1, 1, /has no name/);
});

test('agent names must be lowercase words', () => {
  hasError(errorsOf('AGENT: Billing'), 1, 8, /can't be used as an agent name/);
  hasError(errorsOf('AGENT: 9lives'), 1, 8, /./);
  hasError(errorsOf(`AGENT: a${'b'.repeat(64)}`), 1, 8, /at most 64 characters/);
  hasError(errorsOf('AGENT: billing support'), 1, 16, /single word/);
  assert.ok(compileAgent(`AGENT: a${'b'.repeat(63)}`).ok);
});

test('MODEL is builtin (the default) or provider/model', () => {
  // Changed in v2: v1 refused every model but builtin.
  const r = compileAgent('AGENT: a\nMODEL: openai/gpt-4o-mini\nTEMPERATURE: 0.2\n');
  assert.ok(r.ok && r.program.model === 'openai/gpt-4o-mini' && r.program.temperature === 0.2);
  hasError(errorsOf('AGENT: a\nMODEL: gpt 4\n'), 2, 8, /is not a model\. Write MODEL: builtin, or a provider and a model/);
  hasError(errorsOf('AGENT: a\nTEMPERATURE: 3\n'), 2, 14, /TEMPERATURE is a number from 0/);
  assert.ok(compileAgent('AGENT: a\nMODEL: builtin # the local model\n').ok);
  const noModel = compileAgent('AGENT: a\n');
  assert.ok(noModel.ok && noModel.program.model === 'builtin', 'MODEL defaults to builtin');
});

test('v1 "not available" constructs now compile; a misplaced step is still explained', () => {
  // Changed in v2: TOOLS, MEMORY, TEMPERATURE, ACTION_SET, CALL and top-level DELEGATE exist now.
  const r = compileAgent('AGENT: a\nMEMORY: notes\nTOOLS:\n  t:\n    CODE: |\n      export default () => 1\nFLOW: f\n  TRIGGER: /x/\n  CALL: t() AS y\n  RESPOND: "ok"\nDELEGATE: b TASK "x"\n');
  assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
  assert.equal(r.program.memoryStore, 'notes');
  hasError(errorsOf('AGENT: a\nCALL: t() AS y\n'), 2, 1, /CALL must be inside a FLOW/);
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGER: /x/\n  TOOLS:\n'), 4, 3, /TOOLS cannot be inside a FLOW/);
});

test('indentation: tabs, stray indentation and misaligned steps', () => {
  hasError(errorsOf('AGENT: a\nFLOW: f\n\tTRIGGER: /x/\n'), 3, 1, /spaces, not tabs/);
  hasError(errorsOf('  AGENT: a\n'), 1, 1, /no section above it/);
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGER: /x/\n RESPOND: "x"\n'), 4, 2, /doesn't line up.*expected 2 spaces, found 1/);
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGER: /x/\n  RESPOND: "x"\n    RESPOND: "y"\n'), 5, 5, /RESPOND does not take indented lines/);
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGER: /x/\n  FALLBACK: "x"\n'), 4, 3, /FALLBACK cannot be inside a FLOW/);
});

test('slots: duplicates, reserved names, enum syntax; results that clash with slots', () => {
  const src = [
    'AGENT: a',
    'FLOW: f',
    '  TRIGGER: /x/',
    '  GATHER:',
    '    code: string',
    '    code: number',
    '    message: string',
    '    size: enum[small, large',
    '  DELEGATE: b TASK "t" AS code',
  ].join('\n');
  const e = errorsOf(src);
  hasError(e, 6, 5, /The slot code is gathered twice in FLOW f \(first on line 5\)/);
  hasError(e, 7, 5, /message is a reserved name/);
  hasError(e, 8, 28, /close with \]/);
  hasError(e, 9, 27, /code is already the name of a slot/);
});

test('regex problems are explained', () => {
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGER: pattern /x/g\n  RESPOND: "x"\n'), 3, 23, /flag g can't be used/);
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGER: pattern /x\n  RESPOND: "x"\n'), 3, 20, /missing its closing slash/);
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGER: pattern /[a-/\n  RESPOND: "x"\n'), 3, 20, /./);
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGER: pattern /(a+)+$/\n  RESPOND: "x"\n'), 3, 20, /extremely slow/);
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGER: pattern "x"\n'), 3, 20, /Expected a pattern between slashes/);
});

test('missing quotes and unterminated text', () => {
  hasError(errorsOf('AGENT: a\nFALLBACK: Sorry, no.\n'), 2, 11, /Put the text of FALLBACK in double quotes/);
  hasError(errorsOf('AGENT: a\nFALLBACK: "Sorry, no.\n'), 2, 11, /missing its closing double quote/);
  hasError(errorsOf('AGENT: a\nFALLBACK: \u201cSorry\u201d\n'), 2, 11, /straight double quotes/);
});

test('templates accept only names', () => {
  hasError(errorsOf('AGENT: a\nFALLBACK: "Total: {{ 1 + 1 }}"\n'), 2, 19, /is not a name/);
  hasError(errorsOf('AGENT: a\nFALLBACK: "Hi {{name"\n'), 2, 15, /never closed/);
});

test('HANDOFF and DELEGATE to itself, and top-level HANDOFF conditions', () => {
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGER: /x/\n  DELEGATE: a TASK "t"\n'), 4, 13, /cannot delegate to itself/);
  hasError(errorsOf('AGENT: a\nHANDOFF: b\n'), 2, 11, /needs a condition/);
  hasError(errorsOf('AGENT: a\nHANDOFF: b WHEN mood == sad\n'), 2, 17, /Unknown name mood.*confidence, intent, message/);
  hasError(errorsOf('AGENT: a\nHANDOFF: b WHEN confidence < low\n'), 2, 17, /compare it with a number/);
  hasError(errorsOf('AGENT: a\nHANDOFF: b WHEN confidence <\n'), 2, 29, /Expected a value/);
});

test('unknown keywords get a suggestion, duplicates are reported', () => {
  hasError(errorsOf('AGENT: a\nFALBACK: "x"\n'), 2, 1, /Unknown section FALBACK\. Did you mean FALLBACK\?/);
  hasError(errorsOf('AGENT: a\nFLOW: f\n  TRIGGR: /x/\n'), 3, 3, /Did you mean TRIGGER\?/);
  hasError(errorsOf('AGENT: a\nAGENT: b\n'), 2, 1, /AGENT is given twice \(first on line 1\)/);
  hasError(errorsOf('AGENT: a\nFLOW hello\n'), 2, 5, /Add a colon after FLOW/);
});

test('comments are ignored outside text and patterns, kept inside them', async () => {
  const p = compileOrThrow('# heading\nAGENT: a # the name\nFLOW: f # flow\n  TRIGGER: pattern /#tag/ # comment\n  RESPOND: "use # freely" # comment\n');
  assert.deepEqual(p.flows[0]!.triggers, [{ kind: 'pattern', pattern: { source: '#tag', flags: '' } }]);
  const r = await runTurn(initialState('a'), { message: 'see #tag', sessionId: 's' }, testHost([p]));
  assert.equal(r.response, 'use # freely');
});

test('oversized source is refused without parsing; bad input never throws', () => {
  const big = 'AGENT: a\n' + '# filler\n'.repeat(Math.ceil(MAX_SOURCE_BYTES / 9));
  const e = errorsOf(big);
  assert.equal(e.length, 1);
  assert.match(e[0]!.message, /too large.*256 KB/);
  for (const junk of ['\u0000\u0001', '::::', '{{}}', '/', '"', '  - Q: | A:', 'FLOW:\n  IF:\n', 'AGENT: a\nFLOW: f\n  TRIGGER: |\n  IF: x ==\n']) {
    assert.doesNotThrow(() => compileAgent(junk));
    assert.equal(compileAgent(junk).ok, false);
  }
  assert.equal(compileAgent(42 as unknown as string).ok, false);
});
