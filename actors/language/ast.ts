/** Syntax tree produced by the parser: the agent as written, with positions for diagnostics. */
import type { CompareOp } from './program.js';
import type { ParamType } from './tool-spec.js';

/** A 1-based source position. */
export interface Pos {
  readonly line: number;
  readonly column: number;
}

/** A quoted text; `pos` is the opening quote (template offsets are counted from the next column). */
export interface TextAst {
  readonly text: string;
  readonly pos: Pos;
}

/** A name as written (agent, flow, slot, result). */
export interface NameAst {
  readonly name: string;
  readonly pos: Pos;
}

/** A /pattern/flags as written. */
export interface PatternAst {
  readonly source: string;
  readonly flags: string;
  readonly pos: Pos;
}

/** One alternative of a TRIGGER line. */
export type TriggerAst = { readonly kind: 'pattern'; readonly pattern: PatternAst } | { readonly kind: 'intent'; readonly name: NameAst };

/** A condition as written. */
export type ConditionAst =
  | { readonly kind: 'or' | 'and'; readonly left: ConditionAst; readonly right: ConditionAst }
  | { readonly kind: 'compare'; readonly subject: readonly string[]; readonly pos: Pos; readonly op: CompareOp; readonly value: string | number }
  | { readonly kind: 'truthy'; readonly subject: readonly string[]; readonly pos: Pos; readonly negated: boolean };

/** A CALL argument as written: a name (path) or a literal; `param` when written `param: value`. */
export interface ArgAst {
  readonly param?: NameAst;
  readonly value: { readonly path: readonly string[] } | { readonly literal: string | number | boolean };
  readonly pos: Pos;
}

/** A DELEGATE line (step or top level). */
export interface DelegateAst {
  readonly pos: Pos;
  readonly targets: readonly NameAst[];
  readonly parallel: boolean;
  readonly task?: TextAst;
  readonly as?: NameAst;
  readonly timeoutMs?: number;
  readonly condition?: ConditionAst;
}

/** One line of an ACTION_SET. */
export type ActionAst =
  | { readonly kind: 'button'; readonly label: TextAst; readonly value?: string }
  | { readonly kind: 'select'; readonly label: TextAst; readonly options: readonly string[] }
  | { readonly kind: 'text_input'; readonly label: TextAst };

/** A tool of TOOLS as written; settings are checked by the compiler. */
export interface ToolAst {
  readonly name: NameAst;
  description?: string;
  params?: { readonly entries: ReadonlyArray<{ readonly name: NameAst; readonly type: ParamType }>; readonly pos: Pos };
  http?: { readonly method: string; readonly url: TextAst; readonly pos: Pos };
  headers?: ReadonlyArray<{ readonly name: string; readonly value: TextAst }>;
  body?: TextAst;
  code?: { readonly source: string; readonly pos: Pos };
  async?: { readonly value: boolean; readonly pos: Pos };
  timeoutMs?: { readonly value: number; readonly pos: Pos };
  ttlMs?: { readonly value: number; readonly pos: Pos };
  memoryMb?: { readonly value: number; readonly pos: Pos };
}

/** A slot line of a GATHER block. */
export interface SlotAst {
  readonly name: NameAst;
  readonly type: 'string' | 'number' | 'enum';
  readonly options?: readonly string[];
  readonly prompt?: TextAst;
  readonly validate?: PatternAst;
}

/** A step of a FLOW (or of an IF block). */
export type StepAst =
  | { readonly kind: 'gather'; readonly pos: Pos; readonly slots: readonly SlotAst[] }
  | { readonly kind: 'respond'; readonly pos: Pos; readonly text?: TextAst }
  | { readonly kind: 'handoff'; readonly pos: Pos; readonly target: NameAst; readonly reason?: TextAst }
  | ({ readonly kind: 'delegate' } & DelegateAst)
  | { readonly kind: 'call'; readonly pos: Pos; readonly tool: NameAst; readonly args: readonly ArgAst[]; readonly as?: NameAst }
  | { readonly kind: 'actions'; readonly pos: Pos; readonly actions: readonly ActionAst[] }
  | { readonly kind: 'if'; readonly pos: Pos; readonly condition: ConditionAst; readonly steps: readonly StepAst[] };

/** A FLOW block. */
export interface FlowAst {
  readonly name: NameAst;
  readonly triggers: readonly TriggerAst[];
  readonly steps: readonly StepAst[];
}

/** A top-level `HANDOFF: target WHEN condition [REASON "..."]`. */
export interface TopHandoffAst {
  readonly target: NameAst;
  readonly condition: ConditionAst;
  readonly conditionText: string;
  readonly reason?: TextAst;
}

/** A KNOWLEDGE entry. */
export interface KnowledgeAst {
  readonly question: string;
  readonly answer: TextAst;
}

/** A whole agent source. */
export interface AgentAst {
  agent?: NameAst;
  description?: string;
  model?: { readonly value: string; readonly pos: Pos };
  temperature?: { readonly value: number; readonly pos: Pos };
  persona?: string;
  memory?: NameAst;
  readonly knowledge: KnowledgeAst[];
  readonly tools: ToolAst[];
  readonly flows: FlowAst[];
  readonly delegates: DelegateAst[];
  readonly handoffs: TopHandoffAst[];
  fallback?: TextAst;
}
