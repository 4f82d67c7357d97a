/**
 * Parser: source lines → indentation blocks → AgentAst. Syntax errors are collected in a
 * Diagnostics sink and parsing continues with the next line, so one pass reports many errors.
 */
import type { AgentAst, ConditionAst, FlowAst, NameAst, PatternAst, Pos, SlotAst, StepAst, TextAst, TopHandoffAst, TriggerAst } from './ast.js';
import { tokenize, stripComment, type Token } from './lexer.js';
import type { CompareOp } from './program.js';
import { closest, type Diagnostics, type SourceLine } from './source.js';
import { unsafePatternReason } from './safe-pattern.js';

/** Top-level sections of this version. */
export const TOP_LEVEL_KEYWORDS = ['AGENT', 'DESCRIPTION', 'MODEL', 'PERSONA', 'KNOWLEDGE', 'FLOW', 'HANDOFF', 'FALLBACK'] as const;
/** Steps allowed inside a FLOW in this version. */
export const FLOW_KEYWORDS = ['TRIGGER', 'GATHER', 'RESPOND', 'HANDOFF', 'DELEGATE', 'IF'] as const;
/** Constructs of the language that a later version will bring. */
export const FUTURE_KEYWORDS = ['TOOLS', 'CALL', 'MEMORY', 'ACTION_SET', 'TEMPERATURE'] as const;

const ALL_KEYWORDS: readonly string[] = [...new Set<string>([...TOP_LEVEL_KEYWORDS, ...FLOW_KEYWORDS, ...FUTURE_KEYWORDS])];
const FLOW_ONLY: ReadonlySet<string> = new Set(['TRIGGER', 'GATHER', 'RESPOND', 'IF']);
const TOP_ONLY: ReadonlySet<string> = new Set(['AGENT', 'DESCRIPTION', 'MODEL', 'PERSONA', 'KNOWLEDGE', 'FLOW', 'FALLBACK']);
const SLOT_TYPES = ['string', 'number', 'enum'] as const;

/** An indented line with the lines indented under it. */
interface Block {
  readonly line: number;
  readonly indent: number;
  /** The line without its indentation. */
  readonly content: string;
  readonly children: Block[];
  /** For `KEY: |` lines: the raw indented text below, common indentation removed. */
  blockText?: string;
}

/** A `KEY: value` line split into parts. */
interface KeyLine {
  readonly key: string;
  readonly upper: string;
  readonly value: string;
  /** 1-based column of the first character of `value`. */
  readonly valueColumn: number;
  readonly pos: Pos;
}

const KEY_LINE = /^([A-Za-z_][A-Za-z0-9_]*)[ \t]*:(.*)$/;
const BLOCK_SCALAR = /^[A-Za-z_][A-Za-z0-9_]*[ \t]*:[ \t]*\|[ \t]*(#.*)?$/;

/** Builds the indentation tree; reports tabs and lines that don't line up. */
function buildBlocks(lines: readonly SourceLine[], diag: Diagnostics): Block[] {
  const root: Block = { line: 0, indent: -1, content: '', children: [] };
  const stack: Block[] = [root];
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n]!.text;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const lead = /^[ \t]*/.exec(raw)![0];
    if (lead.includes('\t')) diag.error(lines[n]!.number, lead.indexOf('\t') + 1, 'Use spaces, not tabs, to indent lines.');
    const indent = lead.replace(/\t/g, '    ').length;
    while (stack.length > 1 && stack[stack.length - 1]!.indent >= indent) stack.pop();
    const parent = stack[stack.length - 1]!;
    const block: Block = { line: lines[n]!.number, indent, content: raw.slice(lead.length).trimEnd(), children: [] };
    const siblings = parent.children;
    if (parent === root && indent > 0) {
      diag.error(block.line, 1, `This line is indented, but there is no section above it for it to belong to. Start it at the beginning of the line.`);
    } else if (siblings.length > 0 && siblings[0]!.indent !== indent && parent !== root) {
      diag.error(block.line, indent + 1, `This line's indentation doesn't line up with the lines above it (expected ${siblings[0]!.indent} spaces, found ${indent}).`);
    }
    siblings.push(block);
    stack.push(block);
    if (BLOCK_SCALAR.test(block.content)) {
      // `KEY: |` takes every following line indented deeper (and blank lines) as raw text.
      const body: string[] = [];
      while (n + 1 < lines.length) {
        const next = lines[n + 1]!.text;
        const nextIndent = /^[ \t]*/.exec(next)![0].replace(/\t/g, '    ').length;
        if (next.trim() !== '' && nextIndent <= indent) break;
        body.push(next.replace(/\t/g, '    '));
        n++;
      }
      while (body.length > 0 && body[body.length - 1]!.trim() === '') body.pop();
      const common = Math.min(...body.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)![0].length));
      block.blockText = body.map((l) => l.slice(Number.isFinite(common) ? common : 0).trimEnd()).join('\n');
    }
  }
  return root.children;
}

function keyLine(block: Block): KeyLine | undefined {
  const m = KEY_LINE.exec(block.content);
  if (!m) return undefined;
  const key = m[1]!;
  const value = m[2]!;
  const valueOffset = block.content.length - value.length;
  return { key, upper: key.toUpperCase(), value, valueColumn: block.indent + valueOffset + 1, pos: { line: block.line, column: block.indent + 1 } };
}

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

function notAvailable(kl: KeyLine, diag: Diagnostics): void {
  diag.error(kl.pos.line, kl.pos.column, `${kl.upper} is not available in this version of Parley.`);
}

function noChildren(block: Block, kl: KeyLine, diag: Diagnostics): void {
  const child = block.children[0];
  if (child) diag.error(child.line, child.indent + 1, `${kl.upper} does not take indented lines below it.`);
}

/** Token cursor over one line. */
class Cursor {
  #i = 0;
  constructor(
    readonly tokens: readonly Token[],
    readonly line: number,
    readonly endColumn: number,
  ) {}
  peek(offset = 0): Token | undefined {
    return this.tokens[this.#i + offset];
  }
  next(): Token | undefined {
    return this.tokens[this.#i++];
  }
  get atEnd(): boolean {
    return this.#i >= this.tokens.length;
  }
  /** True when the next token is the word `w` (case-insensitive). */
  isWord(w: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t !== undefined && t.kind === 'word' && t.value.toUpperCase() === w;
  }
  /** Column to blame for "something is missing here". */
  get here(): number {
    return this.peek()?.column ?? this.endColumn;
  }
}

/** Lexes a KeyLine's value, reporting lexer errors. */
function lex(kl: KeyLine, diag: Diagnostics): Cursor {
  const { tokens, errors } = tokenize(kl.value, kl.valueColumn);
  for (const e of errors) diag.error(kl.pos.line, e.column, e.message);
  return new Cursor(tokens, kl.pos.line, kl.valueColumn + kl.value.trimEnd().length);
}

function freeText(kl: KeyLine): string {
  return unquote(stripComment(kl.value).trim());
}

function unquote(s: string): string {
  return s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1).replace(/\\(.)/g, '$1') : s;
}

function expectEnd(cur: Cursor, diag: Diagnostics, after: string): void {
  const t = cur.peek();
  if (t) diag.error(cur.line, t.column, `Unexpected ${describe(t)} after ${after}.`);
}

function describe(t: Token): string {
  if (t.kind === 'string') return `text "${t.value}"`;
  if (t.kind === 'regex') return `pattern /${t.value}/`;
  return `"${t.value}"`;
}

/** Reads a quoted text, explaining missing quotes in plain words. */
function quoted(cur: Cursor, diag: Diagnostics, keyword: string, example: string): TextAst | undefined {
  const t = cur.peek();
  if (!t) {
    diag.error(cur.line, cur.endColumn, `${keyword} needs a text in double quotes, like ${example}`);
    return undefined;
  }
  if (t.kind !== 'string') {
    diag.error(cur.line, t.column, `Put the text of ${keyword} in double quotes, like ${example}`);
    // Skip the unquoted words so they don't cause more errors.
    while (cur.peek() && cur.peek()!.kind !== 'string' && !(cur.peek()!.kind === 'word' && /^[A-Z_]+$/.test(cur.peek()!.value))) cur.next();
    return undefined;
  }
  cur.next();
  return { text: t.value, pos: { line: cur.line, column: t.column } };
}

function name(cur: Cursor, diag: Diagnostics, what: string): NameAst | undefined {
  const t = cur.peek();
  if (!t || t.kind !== 'word') {
    diag.error(cur.line, cur.here, `Expected ${what} here.`);
    return undefined;
  }
  cur.next();
  return { name: t.value, pos: { line: cur.line, column: t.column } };
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

/** condition := and (OR and)* ; and := compare (AND compare)* ; compare := name op value */
function condition(cur: Cursor, diag: Diagnostics, stop: ReadonlySet<string>): ConditionAst | undefined {
  const compare = (): ConditionAst | undefined => {
    const s = cur.peek();
    if (!s || s.kind !== 'word' || stop.has(s.value.toUpperCase())) {
      diag.error(cur.line, cur.here, 'Expected a condition here, like confidence < 0.4 or intent == speak_to_human.');
      return undefined;
    }
    cur.next();
    const op = cur.peek();
    if (!op || op.kind !== 'op' || !OPS.has(op.value)) {
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
    diag.error(kl.pos.line, cur.here, 'A HANDOFF at the top level needs a condition, like HANDOFF: human_desk WHEN confidence < 0.4. To hand off from a FLOW, indent it inside the FLOW.');
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

function delegate(kl: KeyLine, diag: Diagnostics): StepAst | undefined {
  const cur = lex(kl, diag);
  if (cur.peek()?.value === '[') {
    diag.error(kl.pos.line, cur.here, 'Delegating to several agents at once is not available in this version of Parley. Write one DELEGATE line per agent.');
    return undefined;
  }
  const target = name(cur, diag, 'the name of the agent to delegate to, like DELEGATE: fraud_check TASK "assess {{message}}" AS verdict');
  if (!target) return undefined;
  let task: TextAst | undefined;
  let as: NameAst | undefined;
  while (!cur.atEnd) {
    const t = cur.next()!;
    const w = t.kind === 'word' ? t.value.toUpperCase() : '';
    if (w === 'TASK') task = quoted(cur, diag, 'TASK', 'TASK "assess {{message}}"');
    else if (w === 'AS') as = name(cur, diag, 'a name for the result after AS, like AS verdict');
    else {
      diag.error(kl.pos.line, t.column, `Unexpected ${describe(t)} in DELEGATE. Write DELEGATE: agent TASK "..." AS name.`);
      return undefined;
    }
  }
  return { kind: 'delegate', pos: kl.pos, target, ...(task ? { task } : {}), ...(as ? { as } : {}) };
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
        const d = delegate(kl, diag);
        if (d) out.push(d);
        break;
      }
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
        if ((FUTURE_KEYWORDS as readonly string[]).includes(kl.upper)) notAvailable(kl, diag);
        else if (TOP_ONLY.has(kl.upper)) diag.error(kl.pos.line, kl.pos.column, `${kl.upper} cannot be inside a FLOW. Start it at the beginning of the line.`);
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
  const ast: AgentAst = { knowledge: [], flows: [], handoffs: [] };
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
      case 'DELEGATE':
        diag.error(kl.pos.line, kl.pos.column, 'DELEGATE must be a step inside a FLOW in this version of Parley. Indent it under a FLOW.');
        break;
      default:
        if ((FUTURE_KEYWORDS as readonly string[]).includes(kl.upper)) notAvailable(kl, diag);
        else if (FLOW_ONLY.has(kl.upper)) diag.error(kl.pos.line, kl.pos.column, `${kl.upper} must be inside a FLOW. Indent it under a FLOW: line.`);
        else unknownKeyword(kl, diag, TOP_LEVEL_KEYWORDS);
    }
  }
  return ast;
}
