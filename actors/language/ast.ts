/** Syntax tree produced by the parser: the agent as written, with positions for diagnostics. */
import type { CompareOp } from './program.js';

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
  | { readonly kind: 'compare'; readonly subject: readonly string[]; readonly pos: Pos; readonly op: CompareOp; readonly value: string | number };

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
  | { readonly kind: 'respond'; readonly pos: Pos; readonly text: TextAst }
  | { readonly kind: 'handoff'; readonly pos: Pos; readonly target: NameAst; readonly reason?: TextAst }
  | { readonly kind: 'delegate'; readonly pos: Pos; readonly target: NameAst; readonly task?: TextAst; readonly as?: NameAst }
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
  persona?: string;
  readonly knowledge: KnowledgeAst[];
  readonly flows: FlowAst[];
  readonly handoffs: TopHandoffAst[];
  fallback?: TextAst;
}
