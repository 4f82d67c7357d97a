/** Conversation turns: the state a session persists, what the host provides, and the turn entry points. */
import { ParleyError } from '../../runtime/index.js';
import { Interpreter } from './interpreter.js';
import type { AgentProgram } from './program.js';

/** Conversation state, JSON-serialisable; the session persists it after each turn. */
export interface ConversationState {
  /** Agent in control. */
  currentAgent: string;
  handoffCount: number;
  slots: Record<string, string | number>;
  /** An unfinished flow waiting for the user's answer to a GATHER slot. */
  pending?: { agent: string; flow: string; step: number; slot?: string; attempts?: number };
  /** Results of DELEGATE ... AS name (and name_error on failure). */
  vars: Record<string, unknown>;
  turn: number;
}

/** A trace event. handoff data: { fromAgent, toAgent, reason, timestamp }; delegate data: { fromAgent, toAgent, task, duration_ms, ok }. */
export interface TraceEvent {
  type: 'handoff' | 'delegate';
  data: Record<string, unknown>;
}

/** What the caller provides to a turn: other agents, delegation, streaming, clock. */
export interface TurnHost {
  /** Another agent of the same project; undefined for an unknown agent. */
  program(agentName: string): Promise<AgentProgram | undefined>;
  /** Runs an agent elsewhere on a task; may fail or time out (the host bounds nesting depth). */
  delegate(agentName: string, task: string): Promise<{ ok: true; response: string } | { ok: false; error: string }>;
  /** Receives the response in pieces as it is produced; the pieces concatenate to the response. */
  onText?(delta: string): void;
  /** Clock for trace timestamps (default: the system clock). */
  now?(): Date;
}

/** The user's message of one turn. */
export interface TurnInput {
  message: string;
  sessionId: string;
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
  return { response: run.response, traceEvents: run.traceEvents, usage: run.usage, state: working, agentName };
}

/** A stateless one-shot run of an agent on a task (the delegate side). HANDOFFs are not followed: the agent answers its FALLBACK. */
export async function runDelegation(program: AgentProgram, task: string, host: TurnHost): Promise<{ response: string; usage: Usage }> {
  const run = new Interpreter(initialState(program.name), { message: task, sessionId: '' }, host, false);
  await run.handle(program);
  return { response: run.response, usage: run.usage };
}
