/**
 * The interpreter of compiled agents with the builtin model: classifies a message, follows
 * top-level HANDOFF rules, runs flows step by step (GATHER, RESPOND, HANDOFF, DELEGATE, IF),
 * answers from KNOWLEDGE or FALLBACK. One Interpreter serves one turn and mutates the state copy it is given.
 */
import { performance } from 'node:perf_hooks';
import { ParleyError } from '../../runtime/index.js';
import { KNOWLEDGE_THRESHOLD, estimateTokens, findPattern, keywords, matchesIntent, similarity, streamPieces, testPattern } from './builtin-model.js';
import type { ModelMessage, ModelTool } from './model-port.js';
import type { ActionSetSpec, AgentProgram, CompareOp, Condition, FlowProgram, KnowledgeEntry, SlotSpec, Step, Template } from './program.js';
import { renderTemplate, resolvePath } from './template.js';
import { coerceParams, paramsJsonSchema, type ToolCallOutcome, type ToolSpec } from './tool-spec.js';
import { MAX_HANDOFFS_PER_TURN, type ActionSet, type ConversationState, type ModelCallRecord, type TraceEvent, type TurnHost, type TurnInput, type TurnStep, type TurnStepKind, type Usage } from './turn.js';

/** Said when an agent has no FALLBACK and nothing else applies. */
export const DEFAULT_FALLBACK = "Sorry, I didn't understand that. Could you say it another way?";
/** Put before the prompt when an answer to a GATHER question is not valid. */
export const RETRY_PREFIX = "Sorry, that doesn't look right. ";
/** Said when the user gave MAX_SLOT_ATTEMPTS invalid answers in a row. */
export const GIVE_UP_MESSAGE = "Sorry, I still couldn't understand that, so let's leave it there for now. You can start again whenever you like.";
/** Said when a flow finishes without having said anything. */
export const FLOW_DONE_MESSAGE = 'Thanks, I have everything I need.';
/** Invalid answers to one GATHER question before the flow is abandoned. */
export const MAX_SLOT_ATTEMPTS = 3;
/** Said when a flow suspends on an ASYNC tool without having said anything first. */
export const HOLDING_MESSAGE = "I'm working on it and will reply here as soon as I have an answer.";
/** Said to every message that arrives while a flow waits for an ASYNC tool. */
export const STILL_WORKING_MESSAGE = "I'm still working on your earlier request and will reply here as soon as it's done.";
/** The error bound to <AS name>_error when an ASYNC tool's answer does not arrive within its TTL. */
export const ASYNC_EXPIRED_ERROR = 'no answer arrived in time';
/** Default limit on one delegation when the DELEGATE line has no TIMEOUT. */
export const DEFAULT_DELEGATE_TIMEOUT_MS = 30_000;
/** Most language-model calls for one answer; the last one is offered no tools, so it must answer in text. */
export const MAX_MODEL_ROUNDS = 5;
/** Longest value kept for a string slot. */
const MAX_SLOT_CHARS = 1000;

type Outcome = { kind: 'done' } | { kind: 'handoff'; target: string; reason: string };
type DelegateOutcome = { ok: true; response: string } | { ok: false; error: string };
const DONE: Outcome = { kind: 'done' };

/** What the builtin model concluded about a message. */
interface Classification {
  readonly flow: FlowProgram | undefined;
  readonly confidence: number;
  readonly knowledge: KnowledgeEntry | undefined;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Enum options mentioned in the text as whole words (case-insensitive). */
function mentionedOptions(options: readonly string[], text: string): string[] {
  return options.filter((o) => new RegExp(`(^|[^\\p{L}\\p{N}_])${escapeRegExp(o)}($|[^\\p{L}\\p{N}_])`, 'iu').test(text));
}

/** Reads a GATHER answer; undefined when it is not valid for the slot. */
export function parseSlotAnswer(slot: SlotSpec, message: string): string | number | undefined {
  const text = message.trim();
  if (text === '') return undefined;
  switch (slot.type) {
    case 'number': {
      const m = /-?\d+(?:\.\d+)?/.exec(text.replace(/(\d),(?=\d{3}(?:\D|$))/g, '$1'));
      if (!m) return undefined;
      if (slot.validate && !testPattern(slot.validate, m[0])) return undefined;
      const n = Number(m[0]);
      return Number.isFinite(n) ? n : undefined;
    }
    case 'enum': {
      const options = slot.options ?? [];
      const exact = options.find((o) => o.toLowerCase() === text.toLowerCase());
      if (exact !== undefined) return exact;
      const mentioned = mentionedOptions(options, text);
      return mentioned.length === 1 ? mentioned[0] : undefined;
    }
    case 'string': {
      if (!slot.validate) return text.slice(0, MAX_SLOT_CHARS);
      if (testPattern(slot.validate, text)) return text.slice(0, MAX_SLOT_CHARS);
      const found = findPattern(slot.validate, text);
      return found !== undefined && testPattern(slot.validate, found) ? found : undefined;
    }
  }
}

/** Finds a slot value inside a message that was not an answer to its question (VALIDATE match, enum mention). */
export function extractSlot(slot: SlotSpec, message: string): string | number | undefined {
  if (slot.type === 'enum') {
    const mentioned = mentionedOptions(slot.options ?? [], message);
    return mentioned.length === 1 ? mentioned[0] : undefined;
  }
  if (!slot.validate) return undefined;
  const found = findPattern(slot.validate, message);
  if (found === undefined || !testPattern(slot.validate, found)) return undefined;
  if (slot.type === 'number') {
    const n = Number(found);
    return Number.isFinite(n) ? n : undefined;
  }
  return found.slice(0, MAX_SLOT_CHARS);
}

/** True when a value is set and not empty, false, 0 or an empty list. */
function truthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

function errorText(err: unknown, fallback: string): string {
  return err instanceof Error && err.message ? err.message : typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string' ? (err as { message: string }).message : fallback;
}

/** Compares numerically when both sides are numbers, else as case-insensitive text; a missing value is "". */
function compareValues(value: unknown, op: CompareOp, right: string | number): boolean {
  const left = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : '';
  const ln = typeof left === 'number' ? left : typeof left === 'string' && left.trim() !== '' ? Number(left) : NaN;
  const rn = typeof right === 'number' ? right : right.trim() !== '' ? Number(right) : NaN;
  if (Number.isFinite(ln) && Number.isFinite(rn)) {
    switch (op) {
      case '==': return ln === rn;
      case '!=': return ln !== rn;
      case '<': return ln < rn;
      case '<=': return ln <= rn;
      case '>': return ln > rn;
      case '>=': return ln >= rn;
    }
  }
  const equal = String(left).toLowerCase() === String(right).toLowerCase();
  if (op === '==') return equal;
  if (op === '!=') return !equal;
  return false;
}


/** Runs one turn (or one delegation) over one working state. */
export class Interpreter {
  readonly traceEvents: TraceEvent[] = [];
  readonly usage: Usage = { inputTokens: 0, outputTokens: 0 };
  readonly modelCalls: ModelCallRecord[] = [];
  /** Flow, GATHER, tool, knowledge and fallback steps, in order (see TurnStep). */
  readonly steps: TurnStep[] = [];
  /** Choices collected from ACTION_SET steps; undefined when none ran. */
  actions: ActionSet | undefined;
  readonly #state: ConversationState;
  readonly #input: TurnInput;
  readonly #host: TurnHost;
  /** A conversation turn (true) or a one-shot delegation (false): only turns follow handoffs and suspend. */
  readonly #conversation: boolean;
  readonly #parts: string[] = [];
  #streamed = '';
  #confidence = 0;
  #flow: FlowProgram | undefined;

  constructor(state: ConversationState, input: TurnInput, host: TurnHost, conversation: boolean) {
    this.#state = state;
    this.#input = input;
    this.#host = host;
    this.#conversation = conversation;
  }

  /** The whole response so far (parts joined by newlines). */
  get response(): string {
    return this.#parts.join('\n');
  }

  /** Handles the message with `program`, following handoffs; resolves with the agent that answered. */
  async handle(program: AgentProgram): Promise<string> {
    return this.#follow(program, (p) => this.#handleWith(p), true);
  }

  /** Continues the flow suspended on an ASYNC tool with its answer; resolves with the agent in control. */
  async resume(program: AgentProgram, answer: { ok: true; payload: unknown } | { ok: false; error: string }): Promise<string> {
    return this.#follow(program, (p) => this.#resumeFlow(p, answer), false);
  }

  /** Runs `first`, then follows handoffs (the target answers the same message when `answerAfterHandoff`). */
  async #follow(program: AgentProgram, first: (p: AgentProgram) => Promise<Outcome>, answerAfterHandoff: boolean): Promise<string> {
    let current = program;
    let handoffs = 0;
    let step = first;
    for (;;) {
      this.usage.inputTokens += estimateTokens(this.#input.message);
      const outcome = await step(current);
      if (outcome.kind === 'done') break;
      const next = this.#conversation && handoffs < MAX_HANDOFFS_PER_TURN ? await this.#host.program(outcome.target) : undefined;
      if (!next) {
        // Unknown target, a delegation, or the loop guard: the agent in control answers its fallback.
        this.#sayFallback(current);
        break;
      }
      handoffs++;
      this.#state.currentAgent = next.name;
      this.#state.handoffCount += 1;
      delete this.#state.pending;
      this.traceEvents.push({
        type: 'handoff',
        data: { fromAgent: current.name, toAgent: next.name, reason: outcome.reason, timestamp: this.#now().toISOString() },
      });
      current = next;
      if (!answerAfterHandoff) break;
      step = (p) => this.#handleWith(p);
    }
    const modelOutput = this.modelCalls.reduce((n, c) => n + c.outputTokens, 0);
    this.usage.outputTokens = this.modelCalls.length > 0 ? modelOutput : estimateTokens(this.response);
    return current.name;
  }

  #now(): Date {
    return this.#host.now?.() ?? new Date();
  }

  #step(kind: TurnStepKind, program: AgentProgram, detail: Omit<TurnStep, 'kind' | 'agent' | 'at'> = {}): void {
    this.steps.push({ kind, agent: program.name, ...detail, at: this.#now().toISOString() });
  }

  #sayFallback(program: AgentProgram): void {
    this.#step('fallback', program);
    this.#say(program.fallback ? this.#render(program, program.fallback) : DEFAULT_FALLBACK);
  }

  async #handleWith(program: AgentProgram): Promise<Outcome> {
    const message = this.#input.message;
    const pending = this.#state.pending;
    if (pending) {
      delete this.#state.pending;
      if (pending.agent === program.name && pending.callbackId !== undefined) {
        if (pending.expiresAt !== undefined && this.#now().getTime() >= Date.parse(pending.expiresAt)) {
          this.#state.pending = pending;
          return this.#resumeFlow(program, { ok: false, error: ASYNC_EXPIRED_ERROR });
        }
        this.#state.pending = pending;
        this.#say(STILL_WORKING_MESSAGE);
        return DONE;
      }
      if (pending.agent === program.name) {
        const flow = program.flows.find((f) => f.name === pending.flow);
        const step = flow?.steps[pending.step];
        const slot = step?.kind === 'gather' ? step.slots.find((s) => s.name === pending.slot) : undefined;
        if (flow && slot) return this.#answer(program, flow, pending.step, slot, pending.attempts ?? 0);
      }
    }
    const c = this.#classify(program, message);
    this.#confidence = c.confidence;
    this.#flow = c.flow;
    for (const rule of program.delegates ?? []) {
      if (rule.condition && !this.#test(program, rule.condition)) continue;
      if (rule.parallel) await this.#delegateAll(program, rule.targets, rule.task, rule.as, rule.timeoutMs);
      else await this.#delegate(program, rule.targets[0]!, rule.task, rule.as ?? rule.targets[0]!, rule.timeoutMs);
    }
    for (const rule of program.handoffs) {
      if (this.#test(program, rule.condition)) return { kind: 'handoff', target: rule.target, reason: rule.reason };
    }
    if (c.flow) return this.#runFlow(program, c.flow, 0, message, true);
    if (c.knowledge && c.confidence >= KNOWLEDGE_THRESHOLD) {
      this.#step('knowledge', program);
      this.#say(this.#render(program, c.knowledge.answer));
      return DONE;
    }
    if (program.model !== 'builtin') {
      const text = await this.#modelReply(program, false);
      if (text.trim() !== '' || this.#streamed !== '') {
        this.#sayStreamed(text);
        return DONE;
      }
    }
    this.#sayFallback(program);
    return DONE;
  }

  /** Binds an ASYNC tool's answer and runs the rest of the suspended flow. */
  async #resumeFlow(program: AgentProgram, answer: { ok: true; payload: unknown } | { ok: false; error: string }): Promise<Outcome> {
    const pending = this.#state.pending!;
    delete this.#state.pending;
    const flow = program.flows.find((f) => f.name === pending.flow);
    const as = pending.as ?? '';
    if (answer.ok) this.#bind(as, { ok: true, value: answer.payload ?? '' });
    else this.#bind(as, { ok: false, error: answer.error || 'the request failed' });
    if (!flow) {
      this.#sayFallback(program);
      return DONE;
    }
    this.#confidence = 1;
    this.#flow = flow;
    return this.#runFlow(program, flow, pending.step + 1, '', false);
  }

  #classify(program: AgentProgram, message: string): Classification {
    for (const flow of program.flows) {
      const hit = flow.triggers.some((t) => (t.kind === 'pattern' ? testPattern(t.pattern, message) : matchesIntent(message, t.name)));
      if (hit) return { flow, confidence: 1, knowledge: undefined };
    }
    const words = keywords(message);
    let best: KnowledgeEntry | undefined;
    let bestScore = 0;
    for (const k of program.knowledge) {
      const score = similarity(words, k.keywords);
      if (score > bestScore) {
        best = k;
        bestScore = score;
      }
    }
    return { flow: undefined, confidence: bestScore, knowledge: best };
  }

  /** The user answered the pending GATHER question. */
  async #answer(program: AgentProgram, flow: FlowProgram, stepIndex: number, slot: SlotSpec, attempts: number): Promise<Outcome> {
    const value = parseSlotAnswer(slot, this.#input.message);
    if (value === undefined) {
      const failed = attempts + 1;
      this.#step('gather_invalid', program, { flow: flow.name, slot: slot.name });
      if (failed >= MAX_SLOT_ATTEMPTS) {
        this.#step('flow_end', program, { flow: flow.name, error: `abandoned after ${failed} invalid answers to ${slot.name}` });
        this.#say(GIVE_UP_MESSAGE);
        return DONE;
      }
      this.#state.pending = { agent: program.name, flow: flow.name, step: stepIndex, slot: slot.name, attempts: failed };
      const hint = slot.type === 'enum' ? ` Please answer with one of: ${(slot.options ?? []).join(', ')}.` : '';
      this.#say(RETRY_PREFIX + this.#render(program, slot.prompt) + hint);
      return DONE;
    }
    this.#state.slots[slot.name] = value;
    this.#step('gather_filled', program, { flow: flow.name, slot: slot.name });
    this.#confidence = 1;
    this.#flow = flow;
    return this.#runFlow(program, flow, stepIndex, this.#input.message, false);
  }

  /** Runs flow steps from `start`; `source` is a message slot values may be found in. */
  async #runFlow(program: AgentProgram, flow: FlowProgram, start: number, source: string, fresh: boolean): Promise<Outcome> {
    if (fresh) {
      // A new run of the flow must not reuse answers from an earlier run.
      for (const s of flow.steps) if (s.kind === 'gather') for (const slot of s.slots) delete this.#state.slots[slot.name];
      this.#step('flow_start', program, { flow: flow.name });
    }
    const started = performance.now();
    const said = this.#parts.length;
    let i = start;
    while (i < flow.steps.length) {
      const step: Step = flow.steps[i]!;
      switch (step.kind) {
        case 'gather': {
          for (const slot of step.slots) {
            if (Object.prototype.hasOwnProperty.call(this.#state.slots, slot.name)) continue;
            const found = extractSlot(slot, source);
            if (found !== undefined) {
              this.#state.slots[slot.name] = found;
              this.#step('gather_filled', program, { flow: flow.name, slot: slot.name });
              continue;
            }
            this.#state.pending = { agent: program.name, flow: flow.name, step: i, slot: slot.name, attempts: 0 };
            this.#step('gather_prompt', program, { flow: flow.name, slot: slot.name });
            this.#say(this.#render(program, slot.prompt));
            return DONE;
          }
          i++;
          break;
        }
        case 'respond':
          if (step.template) this.#say(this.#render(program, step.template));
          else this.#sayStreamed(await this.#modelReply(program, true));
          i++;
          break;
        case 'handoff':
          return { kind: 'handoff', target: step.target, reason: step.reason };
        case 'delegate':
          await this.#delegate(program, step.target, step.task, step.as, step.timeoutMs);
          i++;
          break;
        case 'delegate_all':
          await this.#delegateAll(program, step.targets, step.task, step.as, step.timeoutMs);
          i++;
          break;
        case 'call': {
          const tool = (program.tools ?? []).find((t) => t.name === step.tool);
          const scope = this.#scope(program);
          const args: Record<string, unknown> = {};
          for (const [k, v] of Object.entries(step.args)) args[k] = 'literal' in v ? v.literal : resolvePath(scope, v.path);
          let outcome: ToolCallOutcome;
          if (tool) outcome = await this.#callTool(program, tool, args);
          else {
            outcome = { ok: false, error: `the tool ${step.tool} does not exist` };
            this.#step('tool_call', program, { tool: step.tool, duration_ms: 0, error: outcome.error });
          }
          if (outcome.ok && outcome.suspended) {
            if (!this.#conversation) {
              this.#bind(step.as, { ok: false, error: 'this tool answers later, which is not possible in a delegated task' });
              i++;
              break;
            }
            const ttl = tool?.kind === 'http' ? tool.ttlMs : undefined;
            this.#state.pending = {
              agent: program.name, flow: flow.name, step: i, callbackId: outcome.suspended.callbackId, as: step.as,
              ...(ttl !== undefined ? { expiresAt: new Date(this.#now().getTime() + ttl).toISOString() } : {}),
            };
            if (this.#parts.length === said) this.#say(HOLDING_MESSAGE);
            return DONE;
          }
          this.#bind(step.as, outcome.ok ? { ok: true, value: outcome.result } : { ok: false, error: outcome.error || 'the tool failed' });
          i++;
          break;
        }
        case 'actions':
          this.#addActions(program, step.actions);
          i++;
          break;
        case 'if':
          i = this.#test(program, step.condition) ? i + 1 : step.skipTo;
          break;
      }
    }
    // duration_ms covers this turn's part of the flow (a flow with GATHER questions spans turns).
    this.#step('flow_end', program, { flow: flow.name, duration_ms: Math.round(performance.now() - started) });
    if (this.#parts.length === said) this.#say(FLOW_DONE_MESSAGE);
    return DONE;
  }

  /** Stores a CALL or DELEGATE result: the value under `as`; on failure an empty value and `<as>_error`. */
  #bind(as: string, r: { ok: true; value: unknown } | { ok: false; error: string }): void {
    if (r.ok) {
      this.#state.vars[as] = r.value === undefined ? '' : r.value;
      delete this.#state.vars[`${as}_error`];
    } else {
      this.#state.vars[as] = '';
      this.#state.vars[`${as}_error`] = r.error;
    }
  }

  #addActions(program: AgentProgram, spec: ActionSetSpec): void {
    const a = (this.actions ??= { buttons: [], selects: [], textInputs: [] });
    for (const b of spec.buttons) {
      const label = this.#render(program, b.label);
      a.buttons.push({ label, value: b.value ?? label });
    }
    for (const s of spec.selects) a.selects.push({ label: this.#render(program, s.label), options: [...s.options] });
    for (const t of spec.textInputs) a.textInputs.push({ label: this.#render(program, t.label) });
  }

  async #callTool(program: AgentProgram, tool: ToolSpec, args: Record<string, unknown>): Promise<ToolCallOutcome> {
    const started = performance.now();
    const outcome = await this.#invokeTool(program, tool, args);
    const error = outcome.ok ? undefined : outcome.error || 'the tool failed';
    this.#step('tool_call', program, { tool: tool.name, duration_ms: Math.round(performance.now() - started), ...(error !== undefined ? { error } : {}) });
    return outcome;
  }

  async #invokeTool(program: AgentProgram, tool: ToolSpec, args: Record<string, unknown>): Promise<ToolCallOutcome> {
    const callTool = this.#host.callTool;
    if (!callTool) return { ok: false, error: 'tools are not available here' };
    const params = coerceParams(tool.params, args);
    if (!params.ok) return params;
    try {
      return await callTool.call(this.#host, { tool, params: params.params, agentName: program.name });
    } catch (err) {
      return { ok: false, error: errorText(err, 'the tool failed') };
    }
  }

  /** One delegation, bounded by `timeoutMs`; never rejects. */
  async #delegateOnce(target: string, task: string, timeoutMs: number | undefined): Promise<DelegateOutcome> {
    let timer: NodeJS.Timeout | undefined;
    const limit = timeoutMs ?? DEFAULT_DELEGATE_TIMEOUT_MS;
    const timeout = new Promise<DelegateOutcome>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, error: `${target} did not answer within ${limit} ms` }), limit);
    });
    try {
      const call = this.#host.delegate(target, task).then(
        (r): DelegateOutcome => (r.ok ? { ok: true, response: r.response } : { ok: false, error: r.error || 'delegation failed' }),
        (err: unknown): DelegateOutcome => ({ ok: false, error: errorText(err, 'delegation failed') }),
      );
      return await Promise.race([call, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs delegations concurrently; records one trace event each, in the order of `targets`. */
  async #runDelegations(program: AgentProgram, targets: readonly string[], task: string, timeoutMs: number | undefined): Promise<DelegateOutcome[]> {
    const runs = targets.map(async (target) => {
      const started = performance.now();
      const result = await this.#delegateOnce(target, task, timeoutMs);
      return { result, duration: Math.round(performance.now() - started) };
    });
    const done = await Promise.all(runs);
    done.forEach(({ result, duration }, k) => {
      this.traceEvents.push({ type: 'delegate', data: { fromAgent: program.name, toAgent: targets[k]!, task, duration_ms: duration, ok: result.ok } });
    });
    return done.map((d) => d.result);
  }

  async #delegate(program: AgentProgram, target: string, taskTemplate: Template, as: string, timeoutMs: number | undefined): Promise<void> {
    const [result] = await this.#runDelegations(program, [target], this.#render(program, taskTemplate), timeoutMs);
    this.#bind(as, result!.ok ? { ok: true, value: result!.response } : { ok: false, error: result!.error });
  }

  /** Parallel fan-out. With AS: `as.<agent>` and `as.<agent>_error`, and `as_error` listing the failures. */
  async #delegateAll(program: AgentProgram, targets: readonly string[], taskTemplate: Template, as: string | undefined, timeoutMs: number | undefined): Promise<void> {
    const results = await this.#runDelegations(program, targets, this.#render(program, taskTemplate), timeoutMs);
    if (as === undefined) {
      results.forEach((r, k) => this.#bind(targets[k]!, r.ok ? { ok: true, value: r.response } : { ok: false, error: r.error }));
      return;
    }
    const combined: Record<string, string> = {};
    const failures: string[] = [];
    results.forEach((r, k) => {
      const t = targets[k]!;
      combined[t] = r.ok ? r.response : '';
      if (!r.ok) {
        combined[`${t}_error`] = r.error;
        failures.push(`${t}: ${r.error}`);
      }
    });
    this.#state.vars[as] = combined;
    if (failures.length > 0) this.#state.vars[`${as}_error`] = failures.join('; ');
    else delete this.#state.vars[`${as}_error`];
  }

  /** Asks the language model for an answer, running the tools it calls; `withFacts` adds slots and results. */
  async #modelReply(program: AgentProgram, withFacts: boolean): Promise<string> {
    const complete = this.#host.complete;
    if (!complete) {
      throw new ParleyError('SERVICE_UNAVAILABLE', `Agent "${program.name}" needs the language model ${program.model}, but no model is available here`, { agent: program.name, model: program.model });
    }
    const tools = (program.tools ?? []).filter((t) => !(t.kind === 'http' && t.async));
    const modelTools: ModelTool[] = tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), parameters: paramsJsonSchema(t.params) }));
    const messages: ModelMessage[] = (this.#input.history ?? []).map((h) => ({ role: h.role === 'user' ? 'user' : 'assistant', content: h.text }));
    if (this.#input.message !== '') messages.push({ role: 'user', content: this.#input.message });
    const prefix = this.#parts.length > 0 ? '\n' : '';
    let streamedPrefix = false;
    const onText = this.#host.onText;
    for (let round = 1; ; round++) {
      const last = round >= MAX_MODEL_ROUNDS;
      const result = await complete.call(this.#host, {
        model: program.model,
        ...(program.temperature !== undefined ? { temperature: program.temperature } : {}),
        system: this.#systemPrompt(program, withFacts),
        messages: [...messages],
        ...(modelTools.length > 0 && !last ? { tools: modelTools } : {}),
        ...(onText
          ? {
              onText: (delta: string) => {
                if (!streamedPrefix && prefix) this.#emit(prefix);
                streamedPrefix = true;
                this.#streamed += delta;
                this.#emit(delta);
              },
            }
          : {}),
        agentName: program.name,
      });
      this.modelCalls.push({ provider: result.provider, model: result.model, inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, costUsd: result.costUsd, durationMs: result.durationMs });
      this.usage.inputTokens += result.usage.inputTokens;
      if (result.toolCalls.length === 0 || last) return result.text;
      messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
      for (const call of result.toolCalls) {
        const tool = tools.find((t) => t.name === call.name);
        const outcome = tool ? await this.#callTool(program, tool, call.arguments ?? {}) : { ok: false as const, error: `there is no tool named ${call.name}` };
        const content = outcome.ok ? JSON.stringify(outcome.result ?? null) : JSON.stringify({ error: outcome.error });
        messages.push({ role: 'tool', toolCallId: call.id, content });
      }
    }
  }

  #systemPrompt(program: AgentProgram, withFacts: boolean): string {
    const parts: string[] = [];
    if (program.persona) parts.push(program.persona.trim());
    parts.push(
      `You are the agent "${program.name}"${program.description ? ` (${program.description})` : ''}. ` +
        'Answer the last user message briefly and helpfully. Rely on the knowledge and facts below and on your tools; if you cannot help, say so plainly.',
    );
    if (program.knowledge.length > 0) {
      parts.push('Knowledge:\n' + program.knowledge.map((k) => `- Q: ${k.question}\n  A: ${this.#render(program, k.answer)}`).join('\n'));
    }
    if (withFacts) {
      const facts = Object.entries({ ...this.#state.slots, ...this.#state.vars })
        .map(([k, v]) => `- ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`.slice(0, 500));
      if (facts.length > 0) parts.push('Facts from this conversation:\n' + facts.join('\n'));
    }
    return parts.join('\n\n');
  }

  /** Names visible to templates and conditions. Built on a null prototype; lookups use own properties only. */
  #scope(program: AgentProgram): Record<string, unknown> {
    const scope: Record<string, unknown> = Object.create(null);
    Object.assign(scope, this.#state.vars, this.#state.slots);
    scope['message'] = this.#input.message;
    scope['session'] = { id: this.#input.sessionId };
    scope['agent'] = { name: program.name };
    scope['confidence'] = this.#confidence;
    scope['contact'] = this.#input.contact ?? {};
    return scope;
  }

  #render(program: AgentProgram, template: Template): string {
    return renderTemplate(template, this.#scope(program));
  }

  #test(program: AgentProgram, c: Condition): boolean {
    switch (c.kind) {
      case 'or':
        return this.#test(program, c.left) || this.#test(program, c.right);
      case 'and':
        return this.#test(program, c.left) && this.#test(program, c.right);
      case 'truthy':
        return truthy(resolvePath(this.#scope(program), c.subject)) !== c.negated;
      case 'compare': {
        if (c.subject.length === 1 && c.subject[0] === 'intent') {
          const name = String(c.value);
          const flow = this.#flow;
          const expressed =
            matchesIntent(this.#input.message, name) ||
            flow?.name === name ||
            (flow?.triggers.some((t) => t.kind === 'intent' && t.name === name) ?? false);
          return c.op === '!=' ? !expressed : expressed;
        }
        return compareValues(resolvePath(this.#scope(program), c.subject), c.op, c.value);
      }
    }
  }

  /** Appends a piece of the response and streams it word by word. */
  #say(text: string): void {
    const chunks = this.#parts.length > 0 ? ['\n', ...streamPieces(text)] : streamPieces(text);
    this.#parts.push(text);
    for (const chunk of chunks) this.#emit(chunk);
  }

  /** Appends a model answer; streams only what the model did not already stream. */
  #sayStreamed(text: string): void {
    const streamed = this.#streamed;
    this.#streamed = '';
    if (streamed === '') return this.#say(text);
    this.#parts.push(text);
    if (text.startsWith(streamed)) for (const chunk of streamPieces(text.slice(streamed.length))) this.#emit(chunk);
  }

  #emit(chunk: string): void {
    const onText = this.#host.onText;
    if (!onText) return;
    try {
      onText.call(this.#host, chunk);
    } catch {
      // A failing listener must not break the turn (the response is still returned whole).
    }
  }
}
