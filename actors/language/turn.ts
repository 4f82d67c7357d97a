/** Conversation turns: the state a session persists, what the host provides, and the turn entry points. */
import { ParleyError } from '../../runtime/index.js';
import { Interpreter } from './interpreter.js';
import type { ModelCallRequest, ModelCallResult } from './model-port.js';
import type { AgentProgram } from './program.js';
import type { ToolCallOutcome, ToolCallRequest } from './tool-spec.js';

/** Conversation state, JSON-serialisable; the session persists it after each turn. */
export interface ConversationState {
  /** Agent in control. */
  currentAgent: string;
  handoffCount: number;
  slots: Record<string, string | number>;
  /**
   * An unfinished flow: waiting for the user's answer to a GATHER slot (`slot`), or suspended on
   * an ASYNC tool's callback (`callbackId`; the CALL's AS name is `as`, `expiresAt` ends the wait).
   */
  pending?: { agent: string; flow: string; step: number; slot?: string; attempts?: number; callbackId?: string; as?: string; expiresAt?: string };
  /** Results of CALL and DELEGATE ... AS name (and name_error on failure). */
  vars: Record<string, unknown>;
  turn: number;
}

/** A trace event. handoff data: { fromAgent, toAgent, reason, timestamp }; delegate data: { fromAgent, toAgent, task, duration_ms, ok }. */
export interface TraceEvent {
  type: 'handoff' | 'delegate';
  data: Record<string, unknown>;
}

/** One language-model call of a turn, for analytics. */
export interface ModelCallRecord {
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  durationMs: number;
}

/** Kinds of step a turn reports (recorded by the session as `flow`/`gather` analytics events). */
export type TurnStepKind = 'flow_start' | 'flow_end' | 'gather_prompt' | 'gather_filled' | 'gather_invalid' | 'tool_call' | 'fallback' | 'knowledge';

/**
 * One step of a turn, in the order it happened. `agent` is the agent that ran it (a turn can
 * cross handoffs); `error` is set on a failed tool_call and on a flow_end that abandoned the flow.
 */
export interface TurnStep {
  kind: TurnStepKind;
  agent: string;
  flow?: string;
  slot?: string;
  tool?: string;
  /** ISO 8601, from the host's clock. */
  at: string;
  duration_ms?: number;
  error?: string;
}

/** What the caller provides to a turn: other agents, delegation, models, tools, streaming, clock. */
export interface TurnHost {
  /** Another agent of the same project; undefined for an unknown agent. */
  program(agentName: string): Promise<AgentProgram | undefined>;
  /** Runs an agent elsewhere on a task; may fail or time out (the host bounds nesting depth). */
  delegate(agentName: string, task: string): Promise<{ ok: true; response: string } | { ok: false; error: string }>;
  /** Answers with a language model (agents whose MODEL is not builtin); absent → such turns fail. */
  complete?(request: ModelCallRequest): Promise<ModelCallResult>;
  /** Runs a tool; for an ASYNC tool, answers { ok: true, suspended: { callbackId } } after creating the callback. */
  callTool?(request: ToolCallRequest): Promise<ToolCallOutcome>;
  /** Receives the response in pieces as it is produced; the pieces concatenate to the response. */
  onText?(delta: string): void;
  /** Clock for trace timestamps (default: the system clock). */
  now?(): Date;
}

/** The user's message of one turn. */
export interface TurnInput {
  message: string;
  sessionId: string;
  /** Earlier messages of the session, oldest first (given to language models). */
  history?: { role: 'user' | 'agent'; text: string }[];
  /** The session's linked contact, for {{contact.*}}. */
  contact?: Record<string, unknown>;
}

/** An ASYNC tool's answer, delivered to resumeTurn. */
export interface ResumeInput {
  callbackId: string;
  /** The callback's body; bound to the CALL's AS name. */
  payload?: unknown;
  /** Set instead of a payload when the callback failed or expired; bound to <AS name>_error. */
  error?: string;
  sessionId?: string;
  contact?: Record<string, unknown>;
}

/** Choices to show with the response (ACTION_SET); each channel renders them its own way. */
export interface ActionSet {
  buttons: { label: string; value: string }[];
  selects: { label: string; options: string[] }[];
  textInputs: { label: string }[];
}

/** Token counts of a turn (builtin: a deterministic estimate, one per word or punctuation mark). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** Outcome of one turn. */
export interface TurnResult {
  response: string;
  traceEvents: TraceEvent[];
  usage: Usage;
  /** The new state (the input state is not modified). */
  state: ConversationState;
  /** Agent that produced the response. */
  agentName: string;
  /** Present when an ACTION_SET ran in this turn. */
  actions?: ActionSet;
  /** Language-model calls made in this turn (empty for builtin agents). */
  modelCalls: ModelCallRecord[];
  /** Flow, GATHER, tool, knowledge and fallback steps of this turn, in order. */
  steps: TurnStep[];
  /** True when the turn ended waiting for an ASYNC tool's callback (see resumeTurn). */
  suspended: boolean;
}

/** Most handoffs followed within one turn; one more and the last agent answers its FALLBACK. */
export const MAX_HANDOFFS_PER_TURN = 5;

/** State of a new conversation with `entryAgent`. */
export function initialState(entryAgent: string): ConversationState {
  return { currentAgent: entryAgent, handoffCount: 0, slots: {}, vars: {}, turn: 0 };
}

/**
 * Runs one turn: the agent in control (after following handoffs) answers the message.
 * Rejects with ParleyError NOT_FOUND when state.currentAgent is unknown to the host.
 */
export async function runTurn(state: ConversationState, input: TurnInput, host: TurnHost): Promise<TurnResult> {
  const working: ConversationState = structuredClone(state);
  working.slots ??= {};
  working.vars ??= {};
  working.handoffCount ??= 0;
  working.turn = (working.turn ?? 0) + 1;
  const program = await host.program(working.currentAgent);
  if (!program) throw new ParleyError('NOT_FOUND', `Agent "${working.currentAgent}" does not exist`, { agent: working.currentAgent });
  const run = new Interpreter(working, input, host, true);
  const agentName = await run.handle(program);
  return result(run, working, agentName);
}

function result(run: Interpreter, state: ConversationState, agentName: string): TurnResult {
  return {
    response: run.response,
    traceEvents: run.traceEvents,
    usage: run.usage,
    state,
    agentName,
    ...(run.actions ? { actions: run.actions } : {}),
    modelCalls: run.modelCalls,
    steps: run.steps,
    suspended: state.pending?.callbackId !== undefined,
  };
}

/**
 * Continues a flow suspended on an ASYNC tool: binds the payload (or error) to the CALL's AS name and
 * runs the following steps. Rejects with CONFLICT when the state is not waiting for that callback.
 */
export async function resumeTurn(state: ConversationState, input: ResumeInput, host: TurnHost): Promise<TurnResult> {
  const working: ConversationState = structuredClone(state);
  working.slots ??= {};
  working.vars ??= {};
  working.handoffCount ??= 0;
  const pending = working.pending;
  if (!pending?.callbackId || pending.callbackId !== input.callbackId) {
    throw new ParleyError('CONFLICT', 'This conversation is not waiting for that callback', { callbackId: input.callbackId });
  }
  const program = await host.program(pending.agent);
  if (!program) throw new ParleyError('NOT_FOUND', `Agent "${pending.agent}" does not exist`, { agent: pending.agent });
  const run = new Interpreter(working, { message: '', sessionId: input.sessionId ?? '', ...(input.contact ? { contact: input.contact } : {}) }, host, true);
  const agentName = await run.resume(program, input.error === undefined ? { ok: true, payload: input.payload } : { ok: false, error: input.error });
  return result(run, working, agentName);
}

/** A stateless one-shot run of an agent on a task (the delegate side). HANDOFFs are not followed: the agent answers its FALLBACK. */
export async function runDelegation(program: AgentProgram, task: string, host: TurnHost): Promise<{ response: string; usage: Usage }> {
  const run = new Interpreter(initialState(program.name), { message: task, sessionId: '' }, host, false);
  await run.handle(program);
  return { response: run.response, usage: run.usage };
}
