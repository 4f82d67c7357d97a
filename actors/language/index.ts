// Public surface of the agent language: compile agents, run conversation turns and delegations.
export type { CompileDiagnostic } from './source.js';
export { MAX_SOURCE_BYTES } from './source.js';
export { compileAgent, referencedAgents, NAME_RULE, MODEL_RULE, BUILTIN_MODEL, type CompileResult, type CompileOptions } from './compiler.js';
export type { AgentProgram, FlowProgram, Step, SlotSpec, Trigger, Condition, HandoffRule, DelegateRule, KnowledgeEntry, Template, TemplatePart, PatternSpec, CompareOp, ArgValue, ActionSetSpec } from './program.js';
export { PROGRAM_FORMAT_VERSION } from './program.js';
export { initialState, runTurn, runDelegation, resumeTurn, MAX_HANDOFFS_PER_TURN } from './turn.js';
export type { ConversationState, TraceEvent, TurnHost, TurnInput, TurnResult, ResumeInput, ActionSet, ModelCallRecord, Usage, TurnStep, TurnStepKind } from './turn.js';
export type { HttpToolSpec, CodeToolSpec, ToolSpec, ParamType, ToolCallRequest, ToolCallOutcome } from './tool-spec.js';
export { DEFAULT_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS, DEFAULT_ASYNC_TTL_MS, DEFAULT_CODE_MEMORY_MB, paramsJsonSchema, coerceParams } from './tool-spec.js';
export { renderTemplateText, templateSecretNames, type RenderOptions } from './template.js';
export { HOLDING_MESSAGE, STILL_WORKING_MESSAGE, ASYNC_EXPIRED_ERROR, DEFAULT_DELEGATE_TIMEOUT_MS, MAX_MODEL_ROUNDS } from './interpreter.js';
export type { ModelCallRequest, ModelCallResult, ModelMessage, ModelTool, ModelToolCall } from './model-port.js';
