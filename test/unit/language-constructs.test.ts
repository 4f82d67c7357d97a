import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileAgent, referencedAgents, type CompileDiagnostic } from '../../actors/language/index.js';
import { compileOrThrow, converse, example, testHost } from '../fixtures/language/host.js';

function errorsOf(source: string, knownAgents?: ReadonlySet<string>): CompileDiagnostic[] {
  const r = compileAgent(source, knownAgents ? { knownAgents } : {});
  assert.equal(r.ok, false, 'expected compile errors');
  return r.ok ? [] : r.errors;
}

function hasError(errors: CompileDiagnostic[], line: number, column: number, pattern: RegExp): void {
  assert.ok(errors.some((e) => e.line === line && e.column === column && pattern.test(e.message)), `no error ${pattern} at ${line}:${column} in ${JSON.stringify(errors, null, 1)}`);
}

test('ACTION_SET: buttons, selects and text inputs come back with the response', async () => {
  const host = testHost([example('billing_support'), example('human_desk'), example('fraud_check')]);
  const [r] = await converse(host, 'billing_support', ['refund INV-12 late']);
  assert.equal(r!.response, 'Refund for INV-12 started.');
  assert.deepEqual(r!.actions, {
    buttons: [{ label: 'Track refund', value: 'track' }],
    selects: [{ label: 'Rate us', options: ['1', '2', '3', '4', '5'] }],
    textInputs: [{ label: 'Anything else?' }],
  });
  const p = compileOrThrow('AGENT: a\nFLOW: f\n  TRIGGER: /go/\n  ACTION_SET:\n    BUTTON: "Yes, {{contact.name}}"\n');
  const [named] = await converse(testHost([p]), 'a', ['go']);
  assert.deepEqual(named!.actions?.buttons, [{ label: 'Yes, ', value: 'Yes, ' }]);
});

test('secrets can never be shown to users: in RESPOND, PROMPT, FALLBACK, IF and CALL inputs they are compile errors', () => {
  const e = errorsOf([
    'AGENT: a',
    'TOOLS:',
    '  t:',
    '    PARAMS: { k: string }',
    '    HTTP: GET https://x.example.com/?k={{params.k}}&s={{secrets.key}}',
    'FLOW: f',
    '  TRIGGER: /x/',
    '  RESPOND: "Your key is {{secrets.api_key}}"',
    '  IF: secrets.api_key == x',
    '    CALL: t(secrets.api_key)',
    'FALLBACK: "{{secrets.x}}"',
  ].join('\n'));
  hasError(e, 8, 25, /^secrets can only be used in tool HTTP settings/);
  hasError(e, 9, 7, /^secrets can only be used in tool HTTP settings/);
  hasError(e, 10, 13, /^secrets can only be used in tool HTTP settings/);
  hasError(e, 11, 12, /^secrets can only be used in tool HTTP settings/);
  assert.equal(e.length, 4, JSON.stringify(e));
});

test('unknown agents (with knownAgents), unknown tools and never-ending cycles, all reported at once', () => {
  const src = [
    'AGENT: shop', //                                   1
    'TOOLS:', //                                        2
    '  lookup:', //                                     3
    '    PARAMS: { id: string }', //                    4
    '    HTTP: GET https://x.example.com/{{params.id}}', // 5
    'FLOW: f', //                                       6
    '  TRIGGER: /x/', //                                7
    '  CALL: lokup(id) AS r', //                        8
    '  CALL: lookup() AS q', //                         9
    '  DELEGATE: [helpr, shop] TASK "t"', //            10
    '  HANDOFF: shop', //                               11
    'HANDOFF: desk WHEN confidence < 0.4', //           12
    'DELEGATE: shop', //                                13
    'HANDOFF: human WHEN intent == help', //            14
  ].join('\n');
  const e = errorsOf(src, new Set(['shop', 'helper', 'human_desk']));
  hasError(e, 8, 9, /^There is no tool named lokup\. Did you mean lookup\?/);
  hasError(e, 9, 9, /^CALL lookup is missing its input id\./);
  hasError(e, 10, 14, /^There is no agent named helpr in this project\. Did you mean helper\?/);
  hasError(e, 10, 21, /^An agent cannot delegate to itself \(shop\)/);
  hasError(e, 11, 12, /^An agent cannot hand off to itself \(shop\)/);
  hasError(e, 12, 10, /^There is no agent named desk in this project/);
  hasError(e, 13, 11, /^An agent cannot delegate to itself/);
  hasError(e, 14, 10, /^There is no agent named human in this project/);
  // Without project context, unknown agents are not errors (the cycles still are).
  const noContext = errorsOf(src);
  assert.equal(noContext.some((d) => /no agent named/.test(d.message)), false);
  hasError(noContext, 11, 12, /hand off to itself/);
  // A top-level HANDOFF without WHEN would hand off every message.
  hasError(errorsOf('AGENT: a\nHANDOFF: b\n'), 2, 11, /needs a condition.*every message would be handed off/);
});

test('TOOLS mistakes are explained with line and column', () => {
  const e = errorsOf([
    'AGENT: a',
    'TOOLS:',
    '  both:',
    '    HTTP: GET https://x.example.com',
    '    CODE: |',
    '      export default () => 1',
    '  neither:',
    '    PARAMS: { n: numbr }',
    '  bad:',
    '    HTTP: FETCH https://x.example.com',
    '    TIMEOUT: soon',
    '  typo:',
    '    HTTP: GET ftp://x.example.com/{{params.nope}}',
    '    TTL: 5m',
    '    HEADRS: { A: "b" }',
    '  code:',
    '    CODE: |',
    '      export default () => 1',
    '    ASYNC: true',
  ].join('\n'));
  hasError(e, 5, 5, /has both HTTP and CODE/);
  hasError(e, 8, 18, /needs a type: string, number or boolean\. Did you mean number\?/);
  hasError(e, 10, 11, /Unknown HTTP method FETCH/);
  hasError(e, 11, 14, /TIMEOUT needs a duration like 5s/);
  hasError(e, 13, 15, /must start with https:\/\//);
  hasError(e, 13, 35, /Tool typo has no parameter nope/);
  hasError(e, 14, 5, /TTL only applies to tools with ASYNC: true/);
  hasError(e, 15, 5, /Unknown tool setting HEADRS\. Did you mean HEADERS\?/);
  hasError(e, 19, 5, /ASYNC only applies to HTTP tools/);
});

test('CALL, DELEGATE and ACTION_SET syntax errors', () => {
  const e = errorsOf([
    'AGENT: a',
    'FLOW: f',
    '  TRIGGER: /x/',
    '  CALL: t AS x',
    '  DELEGATE: [b c]',
    '  DELEGATE: b WHEN confidence < 1',
    '  ACTION_SET:',
    '    BUTON: "x"',
    '    SELECT: "Pick" [a, b]',
    '  RESPOND:',
  ].join('\n'));
  hasError(e, 4, 11, /Put the tool's inputs in parentheses/);
  hasError(e, 5, 16, /Separate the agents with commas/);
  hasError(e, 6, 15, /WHEN is for DELEGATE lines at the top level/);
  hasError(e, 8, 5, /Unknown ACTION_SET line BUTON\. Did you mean BUTTON\?/);
  hasError(e, 9, 20, /lists its choices after OPTIONS/);
  hasError(e, 10, 3, /RESPOND needs a text in double quotes.*needs a MODEL other than builtin/);
});

test('referencedAgents covers parallel and top-level delegates', () => {
  const p = compileOrThrow('AGENT: a\nDELEGATE: [k, s] TASK "x" AS checks\nFLOW: f\n  TRIGGER: /x/\n  DELEGATE: [m, n]\n');
  assert.deepEqual(referencedAgents(p), ['k', 'm', 'n', 's']);
});
