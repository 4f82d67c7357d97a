/**
 * Compiler: source → AgentAst (parser) → checked, flattened, deep-frozen AgentProgram.
 * Never throws on bad input: every problem becomes a CompileDiagnostic.
 */
import type { AgentAst, ConditionAst, DelegateAst, NameAst, Pos, StepAst, TextAst, ToolAst } from './ast.js';
import { keywords } from './builtin-model.js';
import { parseAgent } from './parser.js';
import {
  PROGRAM_FORMAT_VERSION,
  type ActionSetSpec,
  type AgentProgram,
  type ArgValue,
  type Condition,
  type DelegateRule,
  type FlowProgram,
  type HandoffRule,
  type KnowledgeEntry,
  type SlotSpec,
  type Step,
  type Template,
  type Trigger,
} from './program.js';
import { closest, Diagnostics, MAX_SOURCE_BYTES, splitLines, type CompileDiagnostic } from './source.js';
import { parseTemplate } from './template.js';
import {
  DEFAULT_ASYNC_TTL_MS,
  DEFAULT_CODE_MEMORY_MB,
  DEFAULT_TOOL_TIMEOUT_MS,
  MAX_ASYNC_TTL_MS,
  MAX_CODE_MEMORY_MB,
  MAX_TOOL_TIMEOUT_MS,
  type HttpToolSpec,
  type ParamType,
  type ToolSpec,
} from './tool-spec.js';

/** Outcome of compileAgent. */
export type CompileResult = { ok: true; program: AgentProgram } | { ok: false; errors: CompileDiagnostic[] };

/** Project context for compileAgent. */
export interface CompileOptions {
  /** Agents of the project; when given, a HANDOFF or DELEGATE target outside it is a compile error. */
  knownAgents?: ReadonlySet<string>;
}

/** Rule for agent, flow, slot, intent, tool and result names. */
export const NAME_RULE = /^[a-z][a-z0-9_]{0,63}$/;
/** The deterministic local model. */
export const BUILTIN_MODEL = 'builtin';
/** Shape of MODEL values other than builtin: provider/model. */
export const MODEL_RULE = /^[a-z0-9][a-z0-9_-]{0,31}\/[A-Za-z0-9][A-Za-z0-9._:\/-]{0,127}$/;
/** Longest DELEGATE TIMEOUT. */
export const MAX_DELEGATE_TIMEOUT_MS = 5 * 60_000;
/** Names templates and conditions provide themselves; slots and results may not use them. */
const RESERVED_NAMES: ReadonlySet<string> = new Set(['message', 'session', 'agent', 'confidence', 'intent', 'contact', 'secrets', 'params']);
const TOP_CONDITION_NAMES = ['confidence', 'intent', 'message', 'contact'];
const SECRETS_MESSAGE = 'secrets can only be used in tool HTTP settings (HTTP, HEADERS, BODY), so that they are never shown to anyone.';

function checkName(diag: Diagnostics, n: { name: string; pos: Pos }, what: string): void {
  if (!NAME_RULE.test(n.name)) {
    diag.error(n.pos.line, n.pos.column, `"${n.name}" can't be used as ${what}. Use lowercase letters, digits and _, starting with a letter (like billing_support), at most 64 characters.`);
  }
}

/** Position of a character offset of a quoted (or block) text. */
function offsetPos(text: TextAst, offset: number): Pos {
  const before = text.text.slice(0, offset);
  const nl = before.lastIndexOf('\n');
  if (nl < 0) return { line: text.pos.line, column: text.pos.column + 1 + offset };
  return { line: text.pos.line + before.split('\n').length - 1, column: text.pos.column + offset - nl };
}

/** Compiles a user-facing template (RESPOND, PROMPT, TASK, ...): secrets are refused. */
function template(diag: Diagnostics, text: TextAst): Template {
  const { template: t, errors, placeholders } = parseTemplate(text.text);
  for (const e of errors) {
    const p = offsetPos(text, e.offset);
    diag.error(p.line, p.column, e.message);
  }
  for (const ph of placeholders) {
    if (ph.path[0] === 'secrets') {
      const p = offsetPos(text, ph.offset);
      diag.error(p.line, p.column, SECRETS_MESSAGE);
    }
  }
  return t;
}

/** Checks a tool's template text: only {{params.x}} (declared) and {{secrets.x}}. */
function toolTemplate(diag: Diagnostics, text: TextAst, tool: string, params: Readonly<Record<string, ParamType>>): string {
  const { errors, placeholders } = parseTemplate(text.text);
  for (const e of errors) {
    const p = offsetPos(text, e.offset);
    diag.error(p.line, p.column, e.message);
  }
  for (const ph of placeholders) {
    const p = offsetPos(text, ph.offset);
    const [head, second] = ph.path;
    if (head === 'secrets' && ph.path.length === 2) continue;
    if (head === 'params' && ph.path.length === 2 && Object.prototype.hasOwnProperty.call(params, second!)) continue;
    if (head === 'params' && ph.path.length === 2) {
      diag.error(p.line, p.column, `Tool ${tool} has no parameter ${second}. Declare it in PARAMS, like PARAMS: { ${second}: string }.`);
    } else {
      diag.error(p.line, p.column, `In tool settings, placeholders can only be {{params.<name>}} or {{secrets.<name>}} (found {{${ph.path.join('.')}}}).`);
    }
  }
  return text.text;
}

interface CheckContext {
  readonly diag: Diagnostics;
  readonly agentName: string | undefined;
  readonly knownAgents: ReadonlySet<string> | undefined;
}

/** Checks a HANDOFF or DELEGATE target: name rule, never itself, and (with project context) exists. */
function checkTarget(ctx: CheckContext, n: NameAst, verb: 'hand off' | 'delegate'): void {
  checkName(ctx.diag, n, 'an agent name');
  if (n.name === ctx.agentName) {
    const why = verb === 'hand off' ? 'the conversation would come straight back to it' : 'it would keep delegating to itself and never finish';
    ctx.diag.error(n.pos.line, n.pos.column, `An agent cannot ${verb} to itself (${n.name}): ${why}.`);
  } else if (ctx.knownAgents && NAME_RULE.test(n.name) && !ctx.knownAgents.has(n.name)) {
    const guess = closest(n.name, [...ctx.knownAgents]);
    ctx.diag.error(n.pos.line, n.pos.column, `There is no agent named ${n.name} in this project.${guess ? ` Did you mean ${guess}?` : ' Create it first, or check the spelling.'}`);
  }
}

function condition(diag: Diagnostics, c: ConditionAst, allowed: readonly string[]): Condition {
  if (c.kind !== 'compare' && c.kind !== 'truthy') return { kind: c.kind, left: condition(diag, c.left, allowed), right: condition(diag, c.right, allowed) };
  const head = c.subject[0]!;
  if (head === 'secrets') {
    diag.error(c.pos.line, c.pos.column, SECRETS_MESSAGE);
  } else if (!allowed.includes(head)) {
    diag.error(c.pos.line, c.pos.column, `Unknown name ${c.subject.join('.')} in this condition. You can use: ${allowed.join(', ')}.`);
  } else if (c.kind === 'compare' && head === 'confidence' && typeof c.value !== 'number') {
    diag.error(c.pos.line, c.pos.column, 'confidence is a number between 0 and 1: compare it with a number, like confidence < 0.4.');
  } else if (c.kind === 'compare' && head === 'intent' && c.op !== '==' && c.op !== '!=') {
    diag.error(c.pos.line, c.pos.column, 'Compare intent with == or !=, like intent == speak_to_human.');
  } else if (c.kind === 'truthy' && (head === 'intent' || head === 'confidence')) {
    diag.error(c.pos.line, c.pos.column, `Compare ${head} with a value, like ${head === 'intent' ? 'intent == refund' : 'confidence < 0.4'}.`);
  }
  if (c.kind === 'truthy') return { kind: 'truthy', subject: c.subject, negated: c.negated };
  return { kind: 'compare', subject: c.subject, op: c.op, value: c.value };
}

function checkResultName(diag: Diagnostics, n: NameAst): void {
  checkName(diag, n, 'a result name');
  if (RESERVED_NAMES.has(n.name)) diag.error(n.pos.line, n.pos.column, `${n.name} is a reserved name. Choose another name after AS.`);
}

function checkTimeout(diag: Diagnostics, d: DelegateAst): void {
  if (d.timeoutMs !== undefined && (d.timeoutMs < 1 || d.timeoutMs > MAX_DELEGATE_TIMEOUT_MS)) {
    diag.error(d.pos.line, d.pos.column, `A DELEGATE TIMEOUT must be between 1ms and ${MAX_DELEGATE_TIMEOUT_MS / 60_000} minutes.`);
  }
}

function delegateTargets(ctx: CheckContext, d: DelegateAst): void {
  const seen = new Set<string>();
  for (const t of d.targets) {
    checkTarget(ctx, t, 'delegate');
    if (seen.has(t.name)) ctx.diag.error(t.pos.line, t.pos.column, `${t.name} is listed twice in this DELEGATE.`);
    seen.add(t.name);
  }
  if (d.as) checkResultName(ctx.diag, d.as);
  checkTimeout(ctx.diag, d);
}

interface FlowContext extends CheckContext {
  readonly flowName: string;
  readonly conditionNames: readonly string[];
  readonly slotNames: Map<string, number>;
  readonly tools: ReadonlyMap<string, ToolSpec>;
  readonly builtin: boolean;
}

function compileArgs(ctx: FlowContext, s: Extract<StepAst, { kind: 'call' }>): Record<string, ArgValue> {
  const args: Record<string, ArgValue> = {};
  for (const a of s.args) {
    if ('path' in a.value && a.value.path[0] === 'secrets') ctx.diag.error(a.pos.line, a.pos.column, SECRETS_MESSAGE);
  }
  const tool = ctx.tools.get(s.tool.name);
  if (!tool) {
    const guess = closest(s.tool.name, [...ctx.tools.keys()]);
    ctx.diag.error(s.tool.pos.line, s.tool.pos.column, `There is no tool named ${s.tool.name}.${guess ? ` Did you mean ${guess}?` : ' Declare it under TOOLS: first.'}`);
    return args;
  }
  const names = Object.keys(tool.params);
  let position = 0;
  for (const a of s.args) {
    let param: string | undefined;
    if (a.param) {
      param = a.param.name;
      if (!names.includes(param)) {
        ctx.diag.error(a.param.pos.line, a.param.pos.column, `Tool ${tool.name} has no input named ${param}.${names.length ? ` Its inputs are: ${names.join(', ')}.` : ' It takes no inputs.'}`);
        continue;
      }
    } else {
      param = names[position++];
      if (param === undefined) {
        ctx.diag.error(a.pos.line, a.pos.column, `Tool ${tool.name} takes ${names.length === 0 ? 'no inputs' : `only ${names.length} input${names.length === 1 ? '' : 's'} (${names.join(', ')})`}.`);
        continue;
      }
    }
    if (Object.prototype.hasOwnProperty.call(args, param)) ctx.diag.error(a.pos.line, a.pos.column, `The input ${param} is given twice.`);
    args[param] = a.value;
  }
  const missing = names.filter((n) => !Object.prototype.hasOwnProperty.call(args, n));
  if (missing.length > 0) ctx.diag.error(s.tool.pos.line, s.tool.pos.column, `CALL ${tool.name} is missing ${missing.length === 1 ? 'its input' : 'the inputs'} ${missing.join(', ')}.`);
  return args;
}

/** Flattens steps; an IF becomes a conditional jump over its block. */
function flatten(steps: readonly StepAst[], ctx: FlowContext, out: Step[]): void {
  const diag = ctx.diag;
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
        if (s.text) out.push({ kind: 'respond', template: template(diag, s.text) });
        else {
          if (ctx.builtin) diag.error(s.pos.line, s.pos.column, 'RESPOND needs a text in double quotes, like RESPOND: "Done." (a RESPOND without text lets a language model answer, which needs a MODEL other than builtin).');
          out.push({ kind: 'respond' });
        }
        break;
      case 'handoff':
        checkTarget(ctx, s.target, 'hand off');
        out.push({ kind: 'handoff', target: s.target.name, reason: s.reason?.text ?? `flow ${ctx.flowName}` });
        break;
      case 'delegate': {
        delegateTargets(ctx, s);
        const task: Template = s.task ? template(diag, s.task) : [{ path: ['message'] }];
        const timeout = s.timeoutMs !== undefined ? { timeoutMs: s.timeoutMs } : {};
        if (s.parallel) out.push({ kind: 'delegate_all', targets: s.targets.map((t) => t.name), task, ...(s.as ? { as: s.as.name } : {}), ...timeout });
        else out.push({ kind: 'delegate', target: s.targets[0]!.name, task, as: s.as?.name ?? s.targets[0]!.name, ...timeout });
        break;
      }
      case 'call': {
        const args = compileArgs(ctx, s);
        if (s.as) checkResultName(diag, s.as);
        out.push({ kind: 'call', tool: s.tool.name, args, as: s.as?.name ?? s.tool.name });
        break;
      }
      case 'actions': {
        const actions: { buttons: { label: Template; value: string | null }[]; selects: { label: Template; options: string[] }[]; textInputs: { label: Template }[] } = { buttons: [], selects: [], textInputs: [] };
        for (const a of s.actions) {
          if (a.kind === 'button') actions.buttons.push({ label: template(diag, a.label), value: a.value ?? null });
          else if (a.kind === 'select') actions.selects.push({ label: template(diag, a.label), options: [...a.options] });
          else actions.textInputs.push({ label: template(diag, a.label) });
        }
        out.push({ kind: 'actions', actions: actions satisfies ActionSetSpec });
        break;
      }
      case 'if': {
        const cond = condition(diag, s.condition, ctx.conditionNames);
        const at = out.length;
        out.push({ kind: 'if', condition: cond, skipTo: -1 });
        flatten(s.steps, ctx, out);
        out[at] = { kind: 'if', condition: cond, skipTo: out.length };
        break;
      }
    }
  }
}

/** Names a DELEGATE defines: its AS name (and AS_error), or each target's name (and name_error). */
function delegateResultNames(d: DelegateAst): Array<{ name: string; pos: Pos }> {
  if (d.as) return [{ name: d.as.name, pos: d.as.pos }];
  return d.targets.map((t) => ({ name: t.name, pos: t.pos }));
}

/** Every slot and result name an agent defines (usable in IF conditions). */
function definedNames(ast: AgentAst): { slots: Map<string, Pos>; results: Map<string, Pos> } {
  const slots = new Map<string, Pos>();
  const results = new Map<string, Pos>();
  const addResult = (n: string, pos: Pos): void => {
    if (!results.has(n)) results.set(n, pos);
  };
  const walk = (steps: readonly StepAst[]): void => {
    for (const s of steps) {
      if (s.kind === 'gather') for (const slot of s.slots) if (!slots.has(slot.name.name)) slots.set(slot.name.name, slot.name.pos);
      if (s.kind === 'delegate') for (const r of delegateResultNames(s)) addResult(r.name, r.pos);
      if (s.kind === 'call') addResult(s.as?.name ?? s.tool.name, s.as?.pos ?? s.tool.pos);
      if (s.kind === 'if') walk(s.steps);
    }
  };
  for (const d of ast.delegates) for (const r of delegateResultNames(d)) addResult(r.name, r.pos);
  for (const f of ast.flows) walk(f.steps);
  return { slots, results };
}

function compileTool(diag: Diagnostics, t: ToolAst): ToolSpec | undefined {
  const name = t.name.name;
  checkName(diag, t.name, 'a tool name');
  const params: Record<string, ParamType> = {};
  for (const p of t.params?.entries ?? []) {
    checkName(diag, p.name, 'a parameter name');
    if (Object.prototype.hasOwnProperty.call(params, p.name.name)) diag.error(p.name.pos.line, p.name.pos.column, `The parameter ${p.name.name} is declared twice.`);
    params[p.name.name] = p.type;
  }
  const timeoutMs = t.timeoutMs?.value ?? DEFAULT_TOOL_TIMEOUT_MS;
  if (t.timeoutMs && (timeoutMs < 1 || timeoutMs > MAX_TOOL_TIMEOUT_MS)) diag.error(t.timeoutMs.pos.line, t.timeoutMs.pos.column, `A tool TIMEOUT must be between 1ms and ${MAX_TOOL_TIMEOUT_MS / 1000}s.`);
  const description = t.description ? { description: t.description } : {};
  if (t.http && t.code) {
    diag.error(t.code.pos.line, t.code.pos.column, `Tool ${name} has both HTTP and CODE. A tool is either an HTTP call or a piece of code: split it into two tools.`);
    return undefined;
  }
  if (t.code) {
    const where = (what: string, pos: Pos): void => diag.error(pos.line, pos.column, `${what} only applies to HTTP tools; ${name} is a CODE tool.`);
    if (t.headers) where('HEADERS', t.name.pos);
    if (t.body) where('BODY', t.body.pos);
    if (t.async?.value) where('ASYNC', t.async.pos);
    if (t.ttlMs) where('TTL', t.ttlMs.pos);
    const memoryMb = t.memoryMb?.value ?? DEFAULT_CODE_MEMORY_MB;
    if (t.memoryMb && (memoryMb < 1 || memoryMb > MAX_CODE_MEMORY_MB)) diag.error(t.memoryMb.pos.line, t.memoryMb.pos.column, `MEMORY_LIMIT must be between 1MB and ${MAX_CODE_MEMORY_MB}MB.`);
    if (t.code.source.trim() === '') diag.error(t.code.pos.line, t.code.pos.column, `The CODE of tool ${name} is empty.`);
    return { kind: 'code', name, ...description, params, source: t.code.source, timeoutMs, memoryMb };
  }
  if (!t.http) {
    diag.error(t.name.pos.line, t.name.pos.column, `Tool ${name} needs HTTP: (like HTTP: GET https://example.com/items/{{params.id}}) or CODE: | with code below it.`);
    return undefined;
  }
  if (t.memoryMb) diag.error(t.memoryMb.pos.line, t.memoryMb.pos.column, `MEMORY_LIMIT only applies to CODE tools; ${name} is an HTTP tool.`);
  const url = toolTemplate(diag, t.http.url, name, params);
  if (!/^https?:\/\//i.test(url) && !url.startsWith('{{')) {
    diag.error(t.http.url.pos.line, t.http.url.pos.column + 1, 'The address of an HTTP tool must start with https:// (or http://).');
  }
  const headers: Record<string, string> = {};
  for (const h of t.headers ?? []) {
    if (Object.prototype.hasOwnProperty.call(headers, h.name)) diag.error(h.value.pos.line, h.value.pos.column, `The header ${h.name} is given twice.`);
    headers[h.name] = toolTemplate(diag, h.value, name, params);
  }
  const isAsync = t.async?.value ?? false;
  if (t.ttlMs && !isAsync) diag.error(t.ttlMs.pos.line, t.ttlMs.pos.column, 'TTL only applies to tools with ASYNC: true.');
  const ttlMs = t.ttlMs?.value ?? DEFAULT_ASYNC_TTL_MS;
  if (t.ttlMs && (ttlMs < 1000 || ttlMs > MAX_ASYNC_TTL_MS)) diag.error(t.ttlMs.pos.line, t.ttlMs.pos.column, 'A TTL must be between 1s and 7 days.');
  const spec: HttpToolSpec = {
    kind: 'http',
    name,
    ...description,
    params,
    method: t.http.method as HttpToolSpec['method'],
    url,
    headers,
    ...(t.body ? { body: toolTemplate(diag, t.body, name, params) } : {}),
    timeoutMs,
    async: isAsync,
    ...(isAsync ? { ttlMs } : {}),
  };
  return spec;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Compiles agent source; reports as many errors as one pass can find. Never throws. */
export function compileAgent(source: string, options: CompileOptions = {}): CompileResult {
  if (typeof source !== 'string') return { ok: false, errors: [{ line: 1, column: 1, message: 'The agent source must be text.' }] };
  const bytes = Buffer.byteLength(source, 'utf8');
  if (bytes > MAX_SOURCE_BYTES) {
    return { ok: false, errors: [{ line: 1, column: 1, message: `This agent is too large (${Math.ceil(bytes / 1024)} KB). The limit is ${MAX_SOURCE_BYTES / 1024} KB.` }] };
  }
  const diag = new Diagnostics();
  try {
    const program = compileChecked(source, diag, options);
    if (diag.hasErrors || !program) return { ok: false, errors: diag.list() };
    return { ok: true, program: deepFreeze(program) };
  } catch {
    // A bug in the compiler must not take the caller down; report it as a plain error.
    return { ok: false, errors: [...diag.list(), { line: 1, column: 1, message: 'The agent could not be compiled because of an internal error. Please report it.' }] };
  }
}

function compileChecked(source: string, diag: Diagnostics, options: CompileOptions): AgentProgram | undefined {
  const ast = parseAgent(splitLines(source), diag);
  const agentName = ast.agent?.name;
  if (!ast.agent) diag.error(1, 1, 'The agent has no name. Add a line like AGENT: my_agent at the top.');
  else checkName(diag, ast.agent, 'an agent name');
  const check: CheckContext = { diag, agentName, knownAgents: options.knownAgents };

  const model = ast.model?.value ?? BUILTIN_MODEL;
  if (ast.model && model !== BUILTIN_MODEL && !MODEL_RULE.test(model)) {
    diag.error(ast.model.pos.line, ast.model.pos.column, `"${model}" is not a model. Write MODEL: builtin, or a provider and a model separated by /, like MODEL: openai/gpt-4o-mini.`);
  }
  if (ast.memory) checkName(diag, ast.memory, 'a memory store name');

  const knowledge: KnowledgeEntry[] = ast.knowledge.map((k) => ({ question: k.question, answer: template(diag, k.answer), keywords: keywords(k.question) }));

  const tools: ToolSpec[] = [];
  const toolsByName = new Map<string, ToolSpec>();
  const toolLines = new Map<string, number>();
  for (const t of ast.tools) {
    const first = toolLines.get(t.name.name);
    if (first !== undefined) diag.error(t.name.pos.line, t.name.pos.column, `There is already a tool named ${t.name.name} (on line ${first}).`);
    else toolLines.set(t.name.name, t.name.pos.line);
    const spec = compileTool(diag, t);
    if (spec && first === undefined) {
      tools.push(spec);
      toolsByName.set(spec.name, spec);
    } else if (!spec && first === undefined) {
      // Keep CALLs of a broken tool from also being reported as unknown.
      toolsByName.set(t.name.name, { kind: 'code', name: t.name.name, params: Object.fromEntries((t.params?.entries ?? []).map((p) => [p.name.name, p.type])), source: '', timeoutMs: 1, memoryMb: 1 });
    }
  }

  const { slots, results } = definedNames(ast);
  for (const [n, pos] of results) {
    if (slots.has(n)) diag.error(pos.line, pos.column, `${n} is already the name of a slot. Give the result another name with AS.`);
  }
  const resultNames = [...results.keys()].flatMap((r) => [r, `${r}_error`]);
  const ifNames = [...new Set([...TOP_CONDITION_NAMES, 'session', ...slots.keys(), ...resultNames])];

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
    flatten(f.steps, { ...check, flowName: f.name.name, conditionNames: ifNames, slotNames: new Map(), tools: toolsByName, builtin: model === BUILTIN_MODEL }, steps);
    flows.push({ name: f.name.name, triggers, steps });
  }

  const delegates: DelegateRule[] = ast.delegates.map((d) => {
    delegateTargets(check, d);
    return {
      targets: d.targets.map((t) => t.name),
      parallel: d.parallel,
      task: d.task ? template(diag, d.task) : [{ path: ['message'] }],
      ...(d.as ? { as: d.as.name } : {}),
      ...(d.timeoutMs !== undefined ? { timeoutMs: d.timeoutMs } : {}),
      ...(d.condition ? { condition: condition(diag, d.condition, TOP_CONDITION_NAMES) } : {}),
    };
  });
  const topResultNames = ast.delegates.flatMap((d) => delegateResultNames(d).flatMap((r) => [r.name, `${r.name}_error`]));

  const handoffs: HandoffRule[] = ast.handoffs.map((h) => {
    checkTarget(check, h.target, 'hand off');
    return { target: h.target.name, condition: condition(diag, h.condition, [...TOP_CONDITION_NAMES, ...topResultNames]), reason: h.reason?.text ?? h.conditionText };
  });

  const fallback = ast.fallback ? template(diag, ast.fallback) : undefined;
  if (!agentName) return undefined;
  return {
    formatVersion: PROGRAM_FORMAT_VERSION,
    name: agentName,
    ...(ast.description ? { description: ast.description } : {}),
    model,
    ...(ast.temperature ? { temperature: ast.temperature.value } : {}),
    ...(ast.persona ? { persona: ast.persona } : {}),
    ...(ast.memory ? { memoryStore: ast.memory.name } : {}),
    knowledge,
    tools,
    flows,
    delegates,
    handoffs,
    ...(fallback ? { fallback } : {}),
  };
}

/** Agents a program hands off or delegates to (sorted, without duplicates), for the caller to validate. */
export function referencedAgents(program: AgentProgram): string[] {
  const names = new Set<string>();
  for (const h of program.handoffs) names.add(h.target);
  for (const d of program.delegates ?? []) for (const t of d.targets) names.add(t);
  for (const f of program.flows) {
    for (const s of f.steps) {
      if (s.kind === 'handoff' || s.kind === 'delegate') names.add(s.target);
      if (s.kind === 'delegate_all') for (const t of s.targets) names.add(t);
    }
  }
  return [...names].sort();
}
