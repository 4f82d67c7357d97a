/**
 * The interpreter of compiled agents with the builtin model: classifies a message, follows
 * top-level HANDOFF rules, runs flows step by step (GATHER, RESPOND, HANDOFF, DELEGATE, IF),
 * answers from KNOWLEDGE or FALLBACK. One Interpreter serves one turn and mutates the state copy it is given.
 */
import { performance } from 'node:perf_hooks';
import { KNOWLEDGE_THRESHOLD, estimateTokens, findPattern, keywords, matchesIntent, similarity, streamPieces, testPattern } from './builtin-model.js';
import type { AgentProgram, CompareOp, Condition, FlowProgram, KnowledgeEntry, SlotSpec, Template } from './program.js';
import { renderTemplate, resolvePath } from './template.js';
import { MAX_HANDOFFS_PER_TURN, type ConversationState, type TraceEvent, type TurnHost, type TurnInput, type Usage } from './turn.js';

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
/** Longest value kept for a string slot. */
const MAX_SLOT_CHARS = 1000;

type Outcome = { kind: 'done' } | { kind: 'handoff'; target: string; reason: string };
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
  readonly #state: ConversationState;
  readonly #input: TurnInput;
  readonly #host: TurnHost;
  readonly #followHandoffs: boolean;
  readonly #parts: string[] = [];
  #confidence = 0;
  #flow: FlowProgram | undefined;

  constructor(state: ConversationState, input: TurnInput, host: TurnHost, followHandoffs: boolean) {
    this.#state = state;
    this.#input = input;
    this.#host = host;
    this.#followHandoffs = followHandoffs;
  }

  /** The whole response so far (parts joined by newlines). */
  get response(): string {
    return this.#parts.join('\n');
  }

  /** Handles the message with `program`, following handoffs; resolves with the agent that answered. */
  async handle(program: AgentProgram): Promise<string> {
    let current = program;
    let handoffs = 0;
    for (;;) {
      this.usage.inputTokens += estimateTokens(this.#input.message);
      const outcome = await this.#handleWith(current);
      if (outcome.kind === 'done') break;
      const next = this.#followHandoffs && handoffs < MAX_HANDOFFS_PER_TURN ? await this.#host.program(outcome.target) : undefined;
      if (!next) {
        // Unknown target, a delegation, or the loop guard: the agent in control answers its fallback.
        this.#say(current.fallback ? this.#render(current, current.fallback) : DEFAULT_FALLBACK);
        break;
      }
      handoffs++;
      this.#state.currentAgent = next.name;
      this.#state.handoffCount += 1;
      delete this.#state.pending;
      this.traceEvents.push({
        type: 'handoff',
        data: { fromAgent: current.name, toAgent: next.name, reason: outcome.reason, timestamp: (this.#host.now?.() ?? new Date()).toISOString() },
      });
      current = next;
    }
    this.usage.outputTokens = estimateTokens(this.response);
    return current.name;
  }

  async #handleWith(program: AgentProgram): Promise<Outcome> {
    const message = this.#input.message;
    const pending = this.#state.pending;
    if (pending) {
      delete this.#state.pending;
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
    for (const rule of program.handoffs) {
      if (this.#test(program, rule.condition)) return { kind: 'handoff', target: rule.target, reason: rule.reason };
    }
    if (c.flow) return this.#runFlow(program, c.flow, 0, message, true);
    if (c.knowledge && c.confidence >= KNOWLEDGE_THRESHOLD) {
      this.#say(this.#render(program, c.knowledge.answer));
      return DONE;
    }
    this.#say(program.fallback ? this.#render(program, program.fallback) : DEFAULT_FALLBACK);
    return DONE;
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
      if (failed >= MAX_SLOT_ATTEMPTS) {
        this.#say(GIVE_UP_MESSAGE);
        return DONE;
      }
      this.#state.pending = { agent: program.name, flow: flow.name, step: stepIndex, slot: slot.name, attempts: failed };
      const hint = slot.type === 'enum' ? ` Please answer with one of: ${(slot.options ?? []).join(', ')}.` : '';
      this.#say(RETRY_PREFIX + this.#render(program, slot.prompt) + hint);
      return DONE;
    }
    this.#state.slots[slot.name] = value;
    this.#confidence = 1;
    this.#flow = flow;
    return this.#runFlow(program, flow, stepIndex, this.#input.message, false);
  }

  /** Runs flow steps from `start`; `source` is a message slot values may be found in. */
  async #runFlow(program: AgentProgram, flow: FlowProgram, start: number, source: string, fresh: boolean): Promise<Outcome> {
    if (fresh) {
      // A new run of the flow must not reuse answers from an earlier run.
      for (const s of flow.steps) if (s.kind === 'gather') for (const slot of s.slots) delete this.#state.slots[slot.name];
    }
    const said = this.#parts.length;
    let i = start;
    while (i < flow.steps.length) {
      const step = flow.steps[i]!;
      switch (step.kind) {
        case 'gather': {
          for (const slot of step.slots) {
            if (Object.prototype.hasOwnProperty.call(this.#state.slots, slot.name)) continue;
            const found = extractSlot(slot, source);
            if (found !== undefined) {
              this.#state.slots[slot.name] = found;
              continue;
            }
            this.#state.pending = { agent: program.name, flow: flow.name, step: i, slot: slot.name, attempts: 0 };
            this.#say(this.#render(program, slot.prompt));
            return DONE;
          }
          i++;
          break;
        }
        case 'respond':
          this.#say(this.#render(program, step.template));
          i++;
          break;
        case 'handoff':
          return { kind: 'handoff', target: step.target, reason: step.reason };
        case 'delegate':
          await this.#delegate(program, step.target, step.task, step.as);
          i++;
          break;
        case 'if':
          i = this.#test(program, step.condition) ? i + 1 : step.skipTo;
          break;
      }
    }
    if (this.#parts.length === said) this.#say(FLOW_DONE_MESSAGE);
    return DONE;
  }

  async #delegate(program: AgentProgram, target: string, taskTemplate: Template, as: string): Promise<void> {
    const task = this.#render(program, taskTemplate);
    const started = performance.now();
    let result: { ok: true; response: string } | { ok: false; error: string };
    try {
      result = await this.#host.delegate(target, task);
    } catch (err) {
      result = { ok: false, error: err instanceof Error ? err.message : 'delegation failed' };
    }
    const duration = Math.round(performance.now() - started);
    this.traceEvents.push({ type: 'delegate', data: { fromAgent: program.name, toAgent: target, task, duration_ms: duration, ok: result.ok } });
    if (result.ok) {
      this.#state.vars[as] = result.response;
      delete this.#state.vars[`${as}_error`];
    } else {
      this.#state.vars[as] = '';
      this.#state.vars[`${as}_error`] = result.error || 'delegation failed';
    }
  }

  /** Names visible to templates and conditions. Built on a null prototype; lookups use own properties only. */
  #scope(program: AgentProgram): Record<string, unknown> {
    const scope: Record<string, unknown> = Object.create(null);
    Object.assign(scope, this.#state.vars, this.#state.slots);
    scope['message'] = this.#input.message;
    scope['session'] = { id: this.#input.sessionId };
    scope['agent'] = { name: program.name };
    scope['confidence'] = this.#confidence;
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
    const onText = this.#host.onText;
    const chunks = this.#parts.length > 0 ? ['\n', ...streamPieces(text)] : streamPieces(text);
    this.#parts.push(text);
    if (!onText) return;
    for (const chunk of chunks) {
      try {
        onText.call(this.#host, chunk);
      } catch {
        // A failing listener must not break the turn (the response is still returned whole).
      }
    }
  }
}
