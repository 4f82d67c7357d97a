/**
 * Parser: source lines → indentation blocks → AgentAst. Syntax errors are collected in a
 * Diagnostics sink and parsing continues with the next line, so one pass reports many errors.
 */
import type { ActionAst, AgentAst, ArgAst, ConditionAst, DelegateAst, FlowAst, NameAst, PatternAst, SlotAst, StepAst, TextAst, TopHandoffAst, TriggerAst } from './ast.js';
import { stripComment, type Token } from './lexer.js';
import type { CompareOp } from './program.js';
import { closest, type Diagnostics, type SourceLine } from './source.js';
import { unsafePatternReason } from './safe-pattern.js';
import { buildBlocks, describe, expectEnd, freeText, keyLine, lex, name, noChildren, quoted, unquote, type Block, type Cursor, type KeyLine } from './parse-lines.js';
import { parseDuration, parseTools } from './tools-parser.js';

/** Top-level sections. */
export const TOP_LEVEL_KEYWORDS = ['AGENT', 'DESCRIPTION', 'MODEL', 'TEMPERATURE', 'PERSONA', 'MEMORY', 'KNOWLEDGE', 'TOOLS', 'FLOW', 'HANDOFF', 'DELEGATE', 'FALLBACK'] as const;
/** Steps allowed inside a FLOW. */
export const FLOW_KEYWORDS = ['TRIGGER', 'GATHER', 'CALL', 'IF', 'RESPOND', 'ACTION_SET', 'HANDOFF', 'DELEGATE'] as const;
/** Lines of an ACTION_SET. */
export const ACTION_KEYWORDS = ['BUTTON', 'SELECT', 'TEXT_INPUT'] as const;

const ALL_KEYWORDS: readonly string[] = [...new Set<string>([...TOP_LEVEL_KEYWORDS, ...FLOW_KEYWORDS])];
const FLOW_ONLY: ReadonlySet<string> = new Set(['TRIGGER', 'GATHER', 'RESPOND', 'IF', 'CALL', 'ACTION_SET']);
const TOP_ONLY: ReadonlySet<string> = new Set(['AGENT', 'DESCRIPTION', 'MODEL', 'TEMPERATURE', 'PERSONA', 'MEMORY', 'KNOWLEDGE', 'TOOLS', 'FLOW', 'FALLBACK']);
const SLOT_TYPES = ['string', 'number', 'enum'] as const;

/** Explains a line that is not `KEYWORD: value`. */
function reportNotKeyLine(block: Block, diag: Diagnostics, where: 'top' | 'flow'): void {
  const col = block.indent + 1;
  const first = /^[A-Za-z_]+/.exec(block.content)?.[0];
  if (first && ALL_KEYWORDS.includes(first.toUpperCase())) {
    diag.error(block.line, col + first.length, `Add a colon after ${first.toUpperCase()}, like ${first.toUpperCase()}: ...`);
  } else if (block.content.startsWith('-')) {
    diag.error(block.line, col, 'A line starting with "-" must be indented under KNOWLEDGE:.');
  } else {
    const example = where === 'top' ? 'AGENT:, FLOW: or FALLBACK:' : 'TRIGGER:, GATHER: or RESPOND:';
    diag.error(block.line, col, `I don't understand this line. Lines start with a section name and a colon, like ${example}`);
  }
}

function unknownKeyword(kl: KeyLine, diag: Diagnostics, candidates: readonly string[]): void {
  const guess = closest(kl.key, candidates);
  diag.error(kl.pos.line, kl.pos.column, `Unknown section ${kl.key}.${guess ? ` Did you mean ${guess}?` : ` Known sections are ${candidates.join(', ')}.`}`);
}

/** Checks a /pattern/flags token: flags, syntax, and the classic catastrophic-backtracking shape. */
function pattern(t: Token, line: number, diag: Diagnostics): PatternAst | undefined {
  const pos = { line, column: t.column };
  const flags = t.flags ?? '';
  let ok = true;
  for (const f of flags) {
    if (f === 'g' || f === 'y') {
      diag.error(line, t.end - flags.length + flags.indexOf(f), `The pattern flag ${f} can't be used here. Use i (ignore case), m or s.`);
      ok = false;
    } else if (!'imsuv'.includes(f)) {
      diag.error(line, t.end - flags.length + flags.indexOf(f), `Unknown pattern flag ${f}. Use i (ignore case), m or s.`);
      ok = false;
    }
  }
  if (t.value === '') {
    diag.error(line, t.column, 'This pattern is empty. Write something between the slashes, like /refund/i.');
    return undefined;
  }
  if (!ok) return undefined;
  try {
    new RegExp(t.value, flags);
  } catch (err) {
    const detail = String((err as Error).message).split(': ').pop() ?? 'invalid syntax';
    diag.error(line, t.column, `This pattern is not valid: ${detail}.`);
    return undefined;
  }
  const unsafe = unsafePatternReason(t.value, flags);
  if (unsafe) {
    diag.error(line, t.column, unsafe);
    return undefined;
  }
  if (/\((?:[^()\\]|\\.)*[*+](?:[^()\\]|\\.)*\)[*+{]/.test(t.value)) {
    diag.error(line, t.column, 'This pattern repeats a group that itself repeats (like (a+)+), which can make it extremely slow on some messages. Simplify it.');
    return undefined;
  }
  return { source: t.value, flags, pos };
}

const OPS: ReadonlySet<string> = new Set(['==', '!=', '<', '<=', '>', '>=']);

/** condition := and (OR and)* ; and := compare (AND compare)* ; compare := name op value | [NOT] name */
function condition(cur: Cursor, diag: Diagnostics, stop: ReadonlySet<string>): ConditionAst | undefined {
  const compare = (): ConditionAst | undefined => {
    const negated = cur.isWord('NOT');
    if (negated) cur.next();
    const s = cur.peek();
    if (!s || s.kind !== 'word' || stop.has(s.value.toUpperCase())) {
      diag.error(cur.line, cur.here, 'Expected a condition here, like confidence < 0.4 or intent == speak_to_human.');
      return undefined;
    }
    cur.next();
    const op = cur.peek();
    const upper = op?.kind === 'word' ? op.value.toUpperCase() : '';
    if (!op || upper === 'AND' || upper === 'OR' || stop.has(upper)) {
      // A name alone: true when it has a value (not empty, not false, not 0).
      return { kind: 'truthy', subject: s.value.split('.'), pos: { line: cur.line, column: s.column }, negated };
    }
    if (negated) {
      diag.error(cur.line, op.column, `NOT goes before a name on its own, like NOT ${s.value}. To compare, use != instead.`);
      return undefined;
    }
    if (op.kind !== 'op' || !OPS.has(op.value)) {
      diag.error(cur.line, cur.here, `Expected a comparison after ${s.value}: one of == != < <= > >=.`);
      return undefined;
    }
    cur.next();
    const v = cur.peek();
    if (!v || (v.kind !== 'number' && v.kind !== 'string' && v.kind !== 'word')) {
      diag.error(cur.line, cur.here, `Expected a value after ${op.value}, like 0.4, "text" or a name.`);
      return undefined;
    }
    cur.next();
    const value = v.kind === 'number' ? Number(v.value) : v.value;
    if (typeof value === 'number' && !Number.isFinite(value)) {
      diag.error(cur.line, v.column, `${v.value} is not a number.`);
      return undefined;
    }
    return { kind: 'compare', subject: s.value.split('.'), pos: { line: cur.line, column: s.column }, op: op.value as CompareOp, value };
  };
  const conj = (): ConditionAst | undefined => {
    let left = compare();
    while (left && cur.isWord('AND')) {
      cur.next();
      const right = compare();
      left = right ? { kind: 'and', left, right } : undefined;
    }
    return left;
  };
  let left = conj();
  while (left && cur.isWord('OR')) {
    cur.next();
    const right = conj();
    left = right ? { kind: 'or', left, right } : undefined;
  }
  return left;
}

function trigger(kl: KeyLine, diag: Diagnostics): TriggerAst[] {
  const cur = lex(kl, diag);
  const out: TriggerAst[] = [];
  const help = 'A TRIGGER looks like: pattern /refund|money back/i | intent refund';
  if (cur.atEnd) diag.error(kl.pos.line, cur.endColumn, `TRIGGER is empty. ${help}`);
  while (!cur.atEnd) {
    const t = cur.next()!;
    if (t.kind === 'word' && t.value.toLowerCase() === 'pattern') {
      const r = cur.peek();
      if (!r || r.kind !== 'regex') {
        diag.error(kl.pos.line, cur.here, 'Expected a pattern between slashes after "pattern", like pattern /hello|hi/i.');
        return out;
      }
      cur.next();
      const p = pattern(r, kl.pos.line, diag);
      if (p) out.push({ kind: 'pattern', pattern: p });
    } else if (t.kind === 'regex') {
      const p = pattern(t, kl.pos.line, diag);
      if (p) out.push({ kind: 'pattern', pattern: p });
    } else if (t.kind === 'word' && t.value.toLowerCase() === 'intent') {
      const n = name(cur, diag, 'an intent name after "intent", like intent refund');
      if (!n) return out;
      out.push({ kind: 'intent', name: n });
    } else {
      diag.error(kl.pos.line, t.column, `Unexpected ${describe(t)} in TRIGGER. ${help}`);
      return out;
    }
    if (cur.atEnd) break;
    const sep = cur.next()!;
    if (sep.kind !== 'punct' || sep.value !== '|') {
      diag.error(kl.pos.line, sep.column, `Separate the triggers with |. ${help}`);
      return out;
    }
    if (cur.atEnd) diag.error(kl.pos.line, sep.column, `Nothing follows this |. ${help}`);
  }
  return out;
}

function slot(block: Block, diag: Diagnostics): SlotAst | undefined {
  const kl = keyLine(block);
  const help = 'Write slots like: invoice_id: string PROMPT "What\'s the invoice number?" VALIDATE /^INV-\\d+$/';
  if (!kl) {
    diag.error(block.line, block.indent + 1, `I don't understand this slot. ${help}`);
    return undefined;
  }
  noChildren(block, kl, diag);
  const nameAst: NameAst = { name: kl.key, pos: kl.pos };
  const cur = lex(kl, diag);
  const typeTok = cur.next();
  if (!typeTok || typeTok.kind !== 'word') {
    diag.error(kl.pos.line, typeTok?.column ?? cur.endColumn, `The slot ${kl.key} needs a type: string, number or enum[a, b].`);
    return undefined;
  }
  const typeName = typeTok.value.toLowerCase();
  if (!(SLOT_TYPES as readonly string[]).includes(typeName)) {
    const guess = closest(typeName, SLOT_TYPES);
    diag.error(kl.pos.line, typeTok.column, `Unknown slot type ${typeTok.value}.${guess ? ` Did you mean ${guess}?` : ''} Use string, number or enum[a, b].`);
    return undefined;
  }
  let options: string[] | undefined;
  if (typeName === 'enum') {
    options = [];
    const open = cur.next();
    if (!open || open.value !== '[') {
      diag.error(kl.pos.line, open?.column ?? cur.endColumn, 'An enum lists its choices in brackets, like enum[damaged, late, other].');
      return undefined;
    }
    for (;;) {
      const v = cur.next();
      if (!v || (v.kind !== 'word' && v.kind !== 'string' && v.kind !== 'number')) {
        diag.error(kl.pos.line, v?.column ?? cur.endColumn, 'Expected a choice here, like enum[damaged, late, other].');
        return undefined;
      }
      options.push(v.value);
      const sep = cur.next();
      if (sep?.value === ']') break;
      if (sep?.value !== ',') {
        diag.error(kl.pos.line, sep?.column ?? cur.endColumn, 'Separate enum choices with commas and close with ], like enum[damaged, late, other].');
        return undefined;
      }
    }
    if (options.length === 0) return undefined;
  }
  let prompt: TextAst | undefined;
  let validate: PatternAst | undefined;
  while (!cur.atEnd) {
    const t = cur.next()!;
    const word = t.kind === 'word' ? t.value.toUpperCase() : '';
    if (word === 'PROMPT') {
      prompt = quoted(cur, diag, 'PROMPT', 'PROMPT "What\'s the invoice number?"');
    } else if (word === 'VALIDATE') {
      const r = cur.peek();
      if (!r || r.kind !== 'regex') {
        diag.error(kl.pos.line, cur.here, 'VALIDATE needs a pattern between slashes, like VALIDATE /^INV-\\d+$/.');
        return undefined;
      }
      cur.next();
      validate = pattern(r, kl.pos.line, diag);
    } else {
      const guess = t.kind === 'word' ? closest(t.value, ['PROMPT', 'VALIDATE']) : undefined;
      diag.error(kl.pos.line, t.column, `Unexpected ${describe(t)} in slot ${kl.key}.${guess ? ` Did you mean ${guess}?` : ' After the type you can write PROMPT "..." and VALIDATE /.../.'}`);
      return undefined;
    }
  }
  return { name: nameAst, type: typeName as SlotAst['type'], ...(options ? { options } : {}), ...(prompt ? { prompt } : {}), ...(validate ? { validate } : {}) };
}

function flowHandoff(kl: KeyLine, diag: Diagnostics): StepAst | undefined {
  const cur = lex(kl, diag);
  const target = name(cur, diag, 'the name of the agent to hand off to, like HANDOFF: human_desk REASON "needs a person"');
  if (!target) return undefined;
  let reason: TextAst | undefined;
  if (cur.isWord('WHEN')) {
    diag.error(kl.pos.line, cur.here, 'WHEN is for HANDOFF lines at the top level. Inside a FLOW, put the HANDOFF under an IF: step.');
    return undefined;
  }
  if (cur.isWord('REASON')) {
    cur.next();
    reason = quoted(cur, diag, 'REASON', 'REASON "large refund"');
  }
  expectEnd(cur, diag, 'the HANDOFF');
  return { kind: 'handoff', pos: kl.pos, target, ...(reason ? { reason } : {}) };
}

function topHandoff(kl: KeyLine, diag: Diagnostics): TopHandoffAst | undefined {
  const cur = lex(kl, diag);
  const target = name(cur, diag, 'the name of the agent to hand off to, like HANDOFF: human_desk WHEN confidence < 0.4');
  if (!target) return undefined;
  if (!cur.isWord('WHEN')) {
    diag.error(kl.pos.line, cur.here, 'A HANDOFF at the top level needs a condition, like HANDOFF: human_desk WHEN confidence < 0.4. Without one, every message would be handed off and this agent could never answer. To hand off from a FLOW, indent it inside the FLOW.');
    return undefined;
  }
  cur.next();
  const startCol = cur.here;
  const cond = condition(cur, diag, new Set(['REASON']));
  if (!cond) return undefined;
  const endTok = cur.peek(-1);
  const conditionText = kl.value.slice(startCol - kl.valueColumn, (endTok?.end ?? cur.endColumn) - kl.valueColumn).trim();
  let reason: TextAst | undefined;
  if (cur.isWord('REASON')) {
    cur.next();
    reason = quoted(cur, diag, 'REASON', 'REASON "needs a person"');
  }
  expectEnd(cur, diag, 'the condition');
  return { target, condition: cond, conditionText, ...(reason ? { reason } : {}) };
}

/** `DELEGATE: agent | [a, b] [TASK "..."] [AS name] [TIMEOUT 10s] [WHEN condition]` (WHEN at the top level only). */
function delegate(kl: KeyLine, diag: Diagnostics, topLevel: boolean): DelegateAst | undefined {
  const cur = lex(kl, diag);
  const example = 'DELEGATE: fraud_check TASK "assess {{message}}" AS verdict';
  const targets: NameAst[] = [];
  let parallel = false;
  if (cur.peek()?.value === '[') {
    parallel = true;
    cur.next();
    for (;;) {
      const n = name(cur, diag, 'an agent name, like DELEGATE: [kyc_check, sanctions_check] TASK "screen {{contact.name}}" AS checks');
      if (!n) return undefined;
      targets.push(n);
      const sep = cur.next();
      if (sep?.value === ']') break;
      if (sep?.value !== ',') {
        diag.error(kl.pos.line, sep?.column ?? cur.endColumn, 'Separate the agents with commas and close with ], like DELEGATE: [kyc_check, sanctions_check].');
        return undefined;
      }
    }
  } else {
    const n = name(cur, diag, `the name of the agent to delegate to, like ${example}`);
    if (!n) return undefined;
    targets.push(n);
  }
  let task: TextAst | undefined;
  let as: NameAst | undefined;
  let timeoutMs: number | undefined;
  let condition_: ConditionAst | undefined;
  while (!cur.atEnd) {
    const t = cur.next()!;
    const w = t.kind === 'word' ? t.value.toUpperCase() : '';
    if (w === 'TASK') task = quoted(cur, diag, 'TASK', 'TASK "assess {{message}}"');
    else if (w === 'AS') as = name(cur, diag, 'a name for the result after AS, like AS verdict');
    else if (w === 'TIMEOUT') {
      const n = cur.next();
      const unit = cur.peek();
      const ms = n?.kind === 'number' && unit?.kind === 'word' ? parseDuration(n.value + unit.value) : undefined;
      if (ms === undefined) {
        diag.error(kl.pos.line, n?.column ?? cur.endColumn, 'TIMEOUT needs a duration like 10s (ms, s, m or h).');
        return undefined;
      }
      cur.next();
      timeoutMs = ms;
    } else if (w === 'WHEN' && topLevel) {
      condition_ = condition(cur, diag, new Set(['TASK', 'AS', 'TIMEOUT']));
      if (!condition_) return undefined;
    } else if (w === 'WHEN') {
      diag.error(kl.pos.line, t.column, 'WHEN is for DELEGATE lines at the top level. Inside a FLOW, put the DELEGATE under an IF: step.');
      return undefined;
    } else {
      diag.error(kl.pos.line, t.column, `Unexpected ${describe(t)} in DELEGATE. Write ${example}.`);
      return undefined;
    }
  }
  return { pos: kl.pos, targets, parallel, ...(task ? { task } : {}), ...(as ? { as } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(condition_ ? { condition: condition_ } : {}) };
}

/** `CALL: tool(arg, param: value, "text", 42) [AS name]`. */
function call(kl: KeyLine, diag: Diagnostics): StepAst | undefined {
  const cur = lex(kl, diag);
  const example = 'CALL: lookup_invoice(invoice_id) AS invoice';
  const tool = name(cur, diag, `the name of a tool, like ${example}`);
  if (!tool) return undefined;
  const args: ArgAst[] = [];
  const open = cur.next();
  if (!open || open.value !== '(') {
    diag.error(kl.pos.line, open?.column ?? cur.endColumn, `Put the tool's inputs in parentheses after its name, like ${example} (write () when there are none).`);
    return undefined;
  }
  if (cur.peek()?.value === ')') cur.next();
  else {
    for (;;) {
      let param: NameAst | undefined;
      if (cur.peek()?.kind === 'word' && cur.peek(1)?.value === ':') {
        const p = cur.next()!;
        param = { name: p.value, pos: { line: kl.pos.line, column: p.column } };
        cur.next();
      }
      const v = cur.next();
      if (!v || (v.kind !== 'word' && v.kind !== 'string' && v.kind !== 'number')) {
        diag.error(kl.pos.line, v?.column ?? cur.endColumn, `Expected an input here: a name (like invoice_id), a "text" or a number. ${example}`);
        return undefined;
      }
      const value = v.kind === 'word' ? { path: v.value.split('.') } : { literal: v.kind === 'number' ? Number(v.value) : v.value };
      args.push({ ...(param ? { param } : {}), value, pos: { line: kl.pos.line, column: v.column } });
      const sep = cur.next();
      if (sep?.value === ')') break;
      if (sep?.value !== ',') {
        diag.error(kl.pos.line, sep?.column ?? cur.endColumn, `Separate the inputs with commas and close with ), like ${example}`);
        return undefined;
      }
    }
  }
  let as: NameAst | undefined;
  if (cur.isWord('AS')) {
    cur.next();
    as = name(cur, diag, 'a name for the result after AS, like AS invoice');
    if (!as) return undefined;
  }
  expectEnd(cur, diag, 'the CALL');
  return { kind: 'call', pos: kl.pos, tool, args, ...(as ? { as } : {}) };
}

/** The BUTTON / SELECT / TEXT_INPUT lines of an ACTION_SET. */
function actionSet(block: Block, kl: KeyLine, diag: Diagnostics): StepAst {
  if (stripComment(kl.value).trim() !== '') diag.error(kl.pos.line, kl.valueColumn, 'Put each BUTTON, SELECT or TEXT_INPUT on its own indented line below ACTION_SET:.');
  if (block.children.length === 0) diag.error(kl.pos.line, kl.pos.column, 'ACTION_SET needs at least one BUTTON, SELECT or TEXT_INPUT on an indented line below it.');
  const actions: ActionAst[] = [];
  for (const child of block.children) {
    const akl = keyLine(child);
    if (!akl) {
      diag.error(child.line, child.indent + 1, 'I don\'t understand this line. Inside ACTION_SET write BUTTON: "Label" VALUE value, SELECT: "Label" OPTIONS [a, b] or TEXT_INPUT: "Label".');
      continue;
    }
    noChildren(child, akl, diag);
    const cur = lex(akl, diag);
    switch (akl.upper) {
      case 'BUTTON': {
        const label = quoted(cur, diag, 'BUTTON', 'BUTTON: "Track refund" VALUE track');
        if (!label) break;
        let value: string | undefined;
        if (cur.isWord('VALUE')) {
          cur.next();
          const v = cur.next();
          if (!v || (v.kind !== 'word' && v.kind !== 'string' && v.kind !== 'number')) {
            diag.error(akl.pos.line, v?.column ?? cur.endColumn, 'VALUE needs a word, a number or a "text", like VALUE track.');
            break;
          }
          value = v.value;
        }
        expectEnd(cur, diag, 'the button');
        actions.push({ kind: 'button', label, ...(value !== undefined ? { value } : {}) });
        break;
      }
      case 'SELECT': {
        const label = quoted(cur, diag, 'SELECT', 'SELECT: "Rate us" OPTIONS [1, 2, 3, 4, 5]');
        if (!label) break;
        if (!cur.isWord('OPTIONS') || cur.peek(1)?.value !== '[') {
          diag.error(akl.pos.line, cur.here, 'A SELECT lists its choices after OPTIONS in brackets, like OPTIONS [1, 2, 3].');
          break;
        }
        cur.next();
        cur.next();
        const options: string[] = [];
        let ok = true;
        for (;;) {
          const v = cur.next();
          if (!v || (v.kind !== 'word' && v.kind !== 'string' && v.kind !== 'number')) {
            diag.error(akl.pos.line, v?.column ?? cur.endColumn, 'Expected a choice here, like OPTIONS [small, large].');
            ok = false;
            break;
          }
          options.push(v.value);
          const sep = cur.next();
          if (sep?.value === ']') break;
          if (sep?.value !== ',') {
            diag.error(akl.pos.line, sep?.column ?? cur.endColumn, 'Separate the choices with commas and close with ], like OPTIONS [small, large].');
            ok = false;
            break;
          }
        }
        if (!ok) break;
        expectEnd(cur, diag, 'the choices');
        actions.push({ kind: 'select', label, options });
        break;
      }
      case 'TEXT_INPUT': {
        const label = quoted(cur, diag, 'TEXT_INPUT', 'TEXT_INPUT: "Anything else?"');
        if (!label) break;
        expectEnd(cur, diag, 'the label');
        actions.push({ kind: 'text_input', label });
        break;
      }
      default: {
        const guess = closest(akl.key, ACTION_KEYWORDS);
        diag.error(akl.pos.line, akl.pos.column, `Unknown ACTION_SET line ${akl.key}.${guess ? ` Did you mean ${guess}?` : ' Use BUTTON, SELECT or TEXT_INPUT.'}`);
      }
    }
  }
  return { kind: 'actions', pos: kl.pos, actions };
}

function steps(blocks: readonly Block[], diag: Diagnostics, flow: { triggers: TriggerAst[]; hasTrigger: boolean } | undefined): StepAst[] {
  const out: StepAst[] = [];
  for (const block of blocks) {
    const kl = keyLine(block);
    if (!kl) {
      reportNotKeyLine(block, diag, 'flow');
      continue;
    }
    switch (kl.upper) {
      case 'TRIGGER': {
        noChildren(block, kl, diag);
        if (!flow) {
          diag.error(kl.pos.line, kl.pos.column, 'TRIGGER must be directly inside a FLOW, not inside an IF.');
          break;
        }
        if (flow.hasTrigger) diag.error(kl.pos.line, kl.pos.column, 'This FLOW already has a TRIGGER. Combine them on one line with |.');
        flow.hasTrigger = true;
        flow.triggers.push(...trigger(kl, diag));
        break;
      }
      case 'GATHER': {
        if (stripComment(kl.value).trim() !== '') diag.error(kl.pos.line, kl.valueColumn, 'Put each slot of GATHER on its own indented line below GATHER:.');
        if (block.children.length === 0) diag.error(kl.pos.line, kl.pos.column, 'GATHER needs at least one slot on an indented line below it.');
        const slots = block.children.map((c) => slot(c, diag)).filter((s): s is SlotAst => s !== undefined);
        out.push({ kind: 'gather', pos: kl.pos, slots });
        break;
      }
      case 'RESPOND': {
        noChildren(block, kl, diag);
        const cur = lex(kl, diag);
        if (cur.atEnd) {
          // A bare RESPOND: the language model words the answer (checked by the compiler).
          out.push({ kind: 'respond', pos: kl.pos });
          break;
        }
        const text = quoted(cur, diag, 'RESPOND', 'RESPOND: "Refund for {{invoice_id}} started."');
        if (text) {
          expectEnd(cur, diag, 'the text');
          out.push({ kind: 'respond', pos: kl.pos, text });
        }
        break;
      }
      case 'HANDOFF': {
        noChildren(block, kl, diag);
        const h = flowHandoff(kl, diag);
        if (h) out.push(h);
        break;
      }
      case 'DELEGATE': {
        noChildren(block, kl, diag);
        const d = delegate(kl, diag, false);
        if (d) out.push({ kind: 'delegate', ...d });
        break;
      }
      case 'CALL': {
        noChildren(block, kl, diag);
        const c = call(kl, diag);
        if (c) out.push(c);
        break;
      }
      case 'ACTION_SET':
        out.push(actionSet(block, kl, diag));
        break;
      case 'IF': {
        const cur = lex(kl, diag);
        const cond = condition(cur, diag, new Set());
        if (cond) expectEnd(cur, diag, 'the condition');
        if (block.children.length === 0) diag.error(kl.pos.line, kl.pos.column, 'IF needs the steps to run on indented lines below it.');
        const inner = steps(block.children, diag, undefined);
        if (cond) out.push({ kind: 'if', pos: kl.pos, condition: cond, steps: inner });
        break;
      }
      default:
        if (TOP_ONLY.has(kl.upper)) diag.error(kl.pos.line, kl.pos.column, `${kl.upper} cannot be inside a FLOW. Start it at the beginning of the line.`);
        else unknownKeyword(kl, diag, FLOW_KEYWORDS);
    }
  }
  return out;
}

function knowledge(block: Block, diag: Diagnostics, into: AgentAst['knowledge']): void {
  const help = 'Write knowledge entries like: - Q: How do I pay? | A: By card or bank transfer.';
  for (const item of block.children) {
    const text = stripComment(item.content).trimEnd();
    const m = /^-\s*Q\s*:(.*)\|\s*A\s*:(.*)$/i.exec(text);
    if (!m) {
      diag.error(item.line, item.indent + 1, `I don't understand this knowledge entry. ${help}`);
      continue;
    }
    const question = unquote(m[1]!.trim());
    const answer = unquote(m[2]!.trim());
    const answerColumn = item.indent + 1 + text.length - m[2]!.length + (m[2]!.length - m[2]!.trimStart().length);
    if (!question || !answer) {
      diag.error(item.line, item.indent + 1, `This knowledge entry needs both a question and an answer. ${help}`);
      continue;
    }
    for (const c of item.children) diag.error(c.line, c.indent + 1, 'A knowledge entry must fit on one line.');
    // The answer is a template; its pos is one column before its first character (like an opening quote).
    into.push({ question, answer: { text: answer, pos: { line: item.line, column: answerColumn - 1 } } });
  }
}

/** Parses source lines into an AgentAst; errors go to `diag`. */
export function parseAgent(lines: readonly SourceLine[], diag: Diagnostics): AgentAst {
  const ast: AgentAst = { knowledge: [], tools: [], flows: [], delegates: [], handoffs: [] };
  const seen = new Map<string, number>();
  const once = (kl: KeyLine): boolean => {
    const first = seen.get(kl.upper);
    if (first !== undefined) {
      diag.error(kl.pos.line, kl.pos.column, `${kl.upper} is given twice (first on line ${first}).`);
      return false;
    }
    seen.set(kl.upper, kl.pos.line);
    return true;
  };
  for (const block of buildBlocks(lines, diag)) {
    const kl = keyLine(block);
    if (!kl) {
      reportNotKeyLine(block, diag, 'top');
      continue;
    }
    switch (kl.upper) {
      case 'AGENT': {
        noChildren(block, kl, diag);
        if (!once(kl)) break;
        const cur = lex(kl, diag);
        const n = name(cur, diag, 'the agent name, like AGENT: billing_support');
        if (n) {
          const extra = cur.peek();
          if (extra) diag.error(kl.pos.line, extra.column, 'An agent name is a single word: lowercase letters, digits and _ (like billing_support).');
          ast.agent = n;
        }
        break;
      }
      case 'DESCRIPTION':
        noChildren(block, kl, diag);
        if (once(kl)) ast.description = freeText(kl);
        break;
      case 'MODEL':
        noChildren(block, kl, diag);
        if (once(kl)) ast.model = { value: freeText(kl), pos: { line: kl.pos.line, column: kl.valueColumn + (kl.value.length - kl.value.trimStart().length) } };
        break;
      case 'PERSONA':
        if (!once(kl)) break;
        if (block.blockText !== undefined) ast.persona = block.blockText;
        else {
          noChildren(block, kl, diag);
          ast.persona = freeText(kl);
        }
        break;
      case 'KNOWLEDGE':
        if (stripComment(kl.value).trim() !== '') diag.error(kl.pos.line, kl.valueColumn, 'Put each knowledge entry on its own indented line below KNOWLEDGE:.');
        knowledge(block, diag, ast.knowledge);
        break;
      case 'FLOW': {
        const cur = lex(kl, diag);
        const n = name(cur, diag, 'a name for the flow, like FLOW: refund');
        if (n) expectEnd(cur, diag, 'the flow name');
        const flowState = { triggers: [] as TriggerAst[], hasTrigger: false };
        if (block.children.length === 0) diag.error(kl.pos.line, kl.pos.column, 'This FLOW is empty. Indent its TRIGGER: and steps below it.');
        const body = steps(block.children, diag, flowState);
        if (n && !flowState.hasTrigger) diag.error(kl.pos.line, kl.pos.column, `FLOW ${n.name} has no TRIGGER. Add a line like TRIGGER: pattern /${n.name}/i inside it.`);
        if (n) ast.flows.push({ name: n, triggers: flowState.triggers, steps: body } satisfies FlowAst);
        break;
      }
      case 'HANDOFF': {
        noChildren(block, kl, diag);
        const h = topHandoff(kl, diag);
        if (h) ast.handoffs.push(h);
        break;
      }
      case 'FALLBACK': {
        noChildren(block, kl, diag);
        if (!once(kl)) break;
        const cur = lex(kl, diag);
        const text = quoted(cur, diag, 'FALLBACK', 'FALLBACK: "Sorry, I can only help with refunds."');
        if (text) {
          expectEnd(cur, diag, 'the text');
          ast.fallback = text;
        }
        break;
      }
      case 'DELEGATE': {
        noChildren(block, kl, diag);
        const d = delegate(kl, diag, true);
        if (d) ast.delegates.push(d);
        break;
      }
      case 'TEMPERATURE': {
        noChildren(block, kl, diag);
        if (!once(kl)) break;
        const text = stripComment(kl.value).trim();
        const value = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
        if (!(value >= 0 && value <= 2)) diag.error(kl.pos.line, kl.valueColumn + (kl.value.length - kl.value.trimStart().length), 'TEMPERATURE is a number from 0 (most predictable) to 2 (most varied), like TEMPERATURE: 0.3.');
        else ast.temperature = { value, pos: kl.pos };
        break;
      }
      case 'MEMORY': {
        noChildren(block, kl, diag);
        if (!once(kl)) break;
        const cur = lex(kl, diag);
        const n = name(cur, diag, 'the name of a memory store, like MEMORY: billing_notes');
        if (n) {
          expectEnd(cur, diag, 'the memory store name');
          ast.memory = n;
        }
        break;
      }
      case 'TOOLS':
        if (!once(kl)) break;
        if (block.children.length === 0) diag.error(kl.pos.line, kl.pos.column, 'TOOLS needs at least one tool on an indented line below it.');
        parseTools(block, diag, ast.tools);
        break;
      default:
        if (FLOW_ONLY.has(kl.upper)) diag.error(kl.pos.line, kl.pos.column, `${kl.upper} must be inside a FLOW. Indent it under a FLOW: line.`);
        else unknownKeyword(kl, diag, TOP_LEVEL_KEYWORDS);
    }
  }
  return ast;
}
