/**
 * Compiler: source → AgentAst (parser) → checked, flattened, deep-frozen AgentProgram.
 * Never throws on bad input: every problem becomes a CompileDiagnostic.
 */
import type { AgentAst, ConditionAst, Pos, StepAst, TextAst } from './ast.js';
import { keywords } from './builtin-model.js';
import { parseAgent } from './parser.js';
import { PROGRAM_FORMAT_VERSION, type AgentProgram, type Condition, type FlowProgram, type HandoffRule, type KnowledgeEntry, type SlotSpec, type Step, type Template, type Trigger } from './program.js';
import { Diagnostics, MAX_SOURCE_BYTES, splitLines, type CompileDiagnostic } from './source.js';
import { parseTemplate } from './template.js';

/** Outcome of compileAgent. */
export type CompileResult = { ok: true; program: AgentProgram } | { ok: false; errors: CompileDiagnostic[] };

/** Rule for agent, flow, slot, intent and result names. */
export const NAME_RULE = /^[a-z][a-z0-9_]{0,63}$/;
/** The only model of this version. */
export const BUILTIN_MODEL = 'builtin';
/** Names templates and conditions provide themselves; slots and results may not use them. */
const RESERVED_NAMES: ReadonlySet<string> = new Set(['message', 'session', 'agent', 'confidence', 'intent']);
const TOP_CONDITION_NAMES = ['confidence', 'intent', 'message'];

function checkName(diag: Diagnostics, n: { name: string; pos: Pos }, what: string): void {
  if (!NAME_RULE.test(n.name)) {
    diag.error(n.pos.line, n.pos.column, `"${n.name}" can't be used as ${what}. Use lowercase letters, digits and _, starting with a letter (like billing_support), at most 64 characters.`);
  }
}

function template(diag: Diagnostics, text: TextAst): Template {
  const { template: t, errors } = parseTemplate(text.text);
  for (const e of errors) diag.error(text.pos.line, text.pos.column + 1 + e.offset, e.message);
  return t;
}

function condition(diag: Diagnostics, c: ConditionAst, allowed: readonly string[]): Condition {
  if (c.kind !== 'compare') return { kind: c.kind, left: condition(diag, c.left, allowed), right: condition(diag, c.right, allowed) };
  const head = c.subject[0]!;
  if (!allowed.includes(head)) {
    diag.error(c.pos.line, c.pos.column, `Unknown name ${c.subject.join('.')} in this condition. You can use: ${allowed.join(', ')}.`);
  } else if (head === 'confidence' && typeof c.value !== 'number') {
    diag.error(c.pos.line, c.pos.column, 'confidence is a number between 0 and 1: compare it with a number, like confidence < 0.4.');
  } else if (head === 'intent' && c.op !== '==' && c.op !== '!=') {
    diag.error(c.pos.line, c.pos.column, 'Compare intent with == or !=, like intent == speak_to_human.');
  }
  return { kind: 'compare', subject: c.subject, op: c.op, value: c.value };
}

interface FlowContext {
  readonly agentName: string | undefined;
  readonly flowName: string;
  readonly conditionNames: readonly string[];
  readonly slotNames: Map<string, number>;
}

/** Flattens steps; an IF becomes a conditional jump over its block. */
function flatten(diag: Diagnostics, steps: readonly StepAst[], ctx: FlowContext, out: Step[]): void {
  for (const s of steps) {
    switch (s.kind) {
      case 'gather': {
        const slots: SlotSpec[] = [];
        for (const slot of s.slots) {
          checkName(diag, slot.name, 'a slot name');
          if (RESERVED_NAMES.has(slot.name.name)) diag.error(slot.name.pos.line, slot.name.pos.column, `${slot.name.name} is a reserved name. Choose another slot name.`);
          const first = ctx.slotNames.get(slot.name.name);
          if (first !== undefined) diag.error(slot.name.pos.line, slot.name.pos.column, `The slot ${slot.name.name} is gathered twice in FLOW ${ctx.flowName} (first on line ${first}).`);
          else ctx.slotNames.set(slot.name.name, slot.name.pos.line);
          const label = slot.name.name.replace(/_/g, ' ');
          const prompt: Template = slot.prompt
            ? template(diag, slot.prompt)
            : [slot.type === 'enum' ? `What is the ${label}? (${slot.options!.join(', ')})` : `What is the ${label}?`];
          slots.push({
            name: slot.name.name,
            type: slot.type,
            ...(slot.options ? { options: slot.options } : {}),
            prompt,
            ...(slot.validate ? { validate: { source: slot.validate.source, flags: slot.validate.flags } } : {}),
          });
        }
        out.push({ kind: 'gather', slots });
        break;
      }
      case 'respond':
        out.push({ kind: 'respond', template: template(diag, s.text) });
        break;
      case 'handoff':
        checkName(diag, s.target, 'an agent name');
        if (s.target.name === ctx.agentName) diag.error(s.target.pos.line, s.target.pos.column, `An agent cannot hand off to itself (${s.target.name}).`);
        out.push({ kind: 'handoff', target: s.target.name, reason: s.reason?.text ?? `flow ${ctx.flowName}` });
        break;
      case 'delegate': {
        checkName(diag, s.target, 'an agent name');
        if (s.target.name === ctx.agentName) diag.error(s.target.pos.line, s.target.pos.column, `An agent cannot delegate to itself (${s.target.name}).`);
        if (s.as) {
          checkName(diag, s.as, 'a result name');
          if (RESERVED_NAMES.has(s.as.name)) diag.error(s.as.pos.line, s.as.pos.column, `${s.as.name} is a reserved name. Choose another name after AS.`);
        }
        const task: Template = s.task ? template(diag, s.task) : [{ path: ['message'] }];
        out.push({ kind: 'delegate', target: s.target.name, task, as: s.as?.name ?? s.target.name });
        break;
      }
      case 'if': {
        const cond = condition(diag, s.condition, ctx.conditionNames);
        const at = out.length;
        out.push({ kind: 'if', condition: cond, skipTo: -1 });
        flatten(diag, s.steps, ctx, out);
        out[at] = { kind: 'if', condition: cond, skipTo: out.length };
        break;
      }
    }
  }
}

/** Every slot and result name an agent defines (usable in IF conditions). */
function definedNames(ast: AgentAst): { slots: Map<string, Pos>; results: Map<string, Pos> } {
  const slots = new Map<string, Pos>();
  const results = new Map<string, Pos>();
  const walk = (steps: readonly StepAst[]): void => {
    for (const s of steps) {
      if (s.kind === 'gather') for (const slot of s.slots) if (!slots.has(slot.name.name)) slots.set(slot.name.name, slot.name.pos);
      if (s.kind === 'delegate') {
        const n = s.as?.name ?? s.target.name;
        if (!results.has(n)) results.set(n, s.as?.pos ?? s.target.pos);
      }
      if (s.kind === 'if') walk(s.steps);
    }
  };
  for (const f of ast.flows) walk(f.steps);
  return { slots, results };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Compiles agent source; reports as many errors as one pass can find. Never throws. */
export function compileAgent(source: string): CompileResult {
  if (typeof source !== 'string') return { ok: false, errors: [{ line: 1, column: 1, message: 'The agent source must be text.' }] };
  const bytes = Buffer.byteLength(source, 'utf8');
  if (bytes > MAX_SOURCE_BYTES) {
    return { ok: false, errors: [{ line: 1, column: 1, message: `This agent is too large (${Math.ceil(bytes / 1024)} KB). The limit is ${MAX_SOURCE_BYTES / 1024} KB.` }] };
  }
  const diag = new Diagnostics();
  try {
    const program = compileChecked(source, diag);
    if (diag.hasErrors || !program) return { ok: false, errors: diag.list() };
    return { ok: true, program: deepFreeze(program) };
  } catch {
    // A bug in the compiler must not take the caller down; report it as a plain error.
    return { ok: false, errors: [...diag.list(), { line: 1, column: 1, message: 'The agent could not be compiled because of an internal error. Please report it.' }] };
  }
}

function compileChecked(source: string, diag: Diagnostics): AgentProgram | undefined {
  const ast = parseAgent(splitLines(source), diag);
  const agentName = ast.agent?.name;
  if (!ast.agent) diag.error(1, 1, 'The agent has no name. Add a line like AGENT: my_agent at the top.');
  else checkName(diag, ast.agent, 'an agent name');

  const model = ast.model?.value ?? BUILTIN_MODEL;
  if (ast.model && model !== BUILTIN_MODEL) {
    diag.error(ast.model.pos.line, ast.model.pos.column, `Only the builtin model is available in this version of Parley${model ? ` (found "${model}")` : ''}. Write MODEL: builtin.`);
  }

  const knowledge: KnowledgeEntry[] = ast.knowledge.map((k) => ({ question: k.question, answer: template(diag, k.answer), keywords: keywords(k.question) }));

  const { slots, results } = definedNames(ast);
  for (const [n, pos] of results) {
    if (slots.has(n)) diag.error(pos.line, pos.column, `${n} is already the name of a slot. Give the DELEGATE result another name with AS.`);
  }
  const ifNames = [...new Set([...TOP_CONDITION_NAMES, ...slots.keys(), ...[...results.keys()].flatMap((r) => [r, `${r}_error`])])];

  const flows: FlowProgram[] = [];
  const flowLines = new Map<string, number>();
  for (const f of ast.flows) {
    checkName(diag, f.name, 'a flow name');
    const first = flowLines.get(f.name.name);
    if (first !== undefined) diag.error(f.name.pos.line, f.name.pos.column, `There is already a FLOW named ${f.name.name} (on line ${first}). Give each flow its own name.`);
    else flowLines.set(f.name.name, f.name.pos.line);
    const triggers: Trigger[] = f.triggers.map((t) => {
      if (t.kind === 'intent') {
        checkName(diag, t.name, 'an intent name');
        return { kind: 'intent', name: t.name.name };
      }
      return { kind: 'pattern', pattern: { source: t.pattern.source, flags: t.pattern.flags } };
    });
    const steps: Step[] = [];
    flatten(diag, f.steps, { agentName, flowName: f.name.name, conditionNames: ifNames, slotNames: new Map() }, steps);
    flows.push({ name: f.name.name, triggers, steps });
  }

  const handoffs: HandoffRule[] = ast.handoffs.map((h) => {
    checkName(diag, h.target, 'an agent name');
    if (h.target.name === agentName) diag.error(h.target.pos.line, h.target.pos.column, `An agent cannot hand off to itself (${h.target.name}).`);
    return { target: h.target.name, condition: condition(diag, h.condition, TOP_CONDITION_NAMES), reason: h.reason?.text ?? h.conditionText };
  });

  const fallback = ast.fallback ? template(diag, ast.fallback) : undefined;
  if (!agentName) return undefined;
  return {
    formatVersion: PROGRAM_FORMAT_VERSION,
    name: agentName,
    ...(ast.description ? { description: ast.description } : {}),
    model,
    ...(ast.persona ? { persona: ast.persona } : {}),
    knowledge,
    flows,
    handoffs,
    ...(fallback ? { fallback } : {}),
  };
}

/** Agents a program hands off or delegates to (sorted, without duplicates), for the caller to validate. */
export function referencedAgents(program: AgentProgram): string[] {
  const names = new Set<string>();
  for (const h of program.handoffs) names.add(h.target);
  for (const f of program.flows) for (const s of f.steps) if (s.kind === 'handoff' || s.kind === 'delegate') names.add(s.target);
  return [...names].sort();
}
