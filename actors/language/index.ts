// Public surface of the agent language: compile agents, run conversation turns and delegations.
export type { CompileDiagnostic } from './source.js';
export { MAX_SOURCE_BYTES } from './source.js';
export { compileAgent, referencedAgents, NAME_RULE, type CompileResult } from './compiler.js';
export type { AgentProgram, FlowProgram, Step, SlotSpec, Trigger, Condition, HandoffRule, KnowledgeEntry, Template, TemplatePart, PatternSpec, CompareOp } from './program.js';
export { PROGRAM_FORMAT_VERSION } from './program.js';
export { initialState, runTurn, runDelegation, MAX_HANDOFFS_PER_TURN } from './turn.js';
export type { ConversationState, TraceEvent, TurnHost, TurnInput, TurnResult, Usage } from './turn.js';
