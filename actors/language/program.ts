/**
 * The compiled form of an agent: plain JSON data (no functions, no RegExp objects), safe to store
 * with msgpack and to send between threads. Regular expressions are kept as source + flags and
 * built lazily by the interpreter (see builtin-model.ts).
 */

import type { ToolSpec } from './tool-spec.js';

/** Current format of AgentProgram; bump when the shape changes incompatibly. Format 1 programs still run. */
export const PROGRAM_FORMAT_VERSION = 2;

/** A regular expression stored as data. */
export interface PatternSpec {
  readonly source: string;
  readonly flags: string;
}

/** A piece of a template: literal text, or a dotted name to look up (`{{invoice.id}}` → ['invoice', 'id']). */
export type TemplatePart = string | { readonly path: readonly string[] };

/** A compiled `"... {{name}} ..."` template. */
export type Template = readonly TemplatePart[];

/** One way a FLOW can be started. */
export type Trigger =
  | { readonly kind: 'pattern'; readonly pattern: PatternSpec }
  | { readonly kind: 'intent'; readonly name: string };

/** A comparison operator usable in WHEN and IF conditions. */
export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

/** A condition of a top-level HANDOFF ... WHEN or of an IF step. */
export type Condition =
  | { readonly kind: 'or' | 'and'; readonly left: Condition; readonly right: Condition }
  | { readonly kind: 'compare'; readonly subject: readonly string[]; readonly op: CompareOp; readonly value: string | number }
  /** `IF: name` (set and not empty, false or 0) or `IF: NOT name`. */
  | { readonly kind: 'truthy'; readonly subject: readonly string[]; readonly negated: boolean };

/** An argument of a CALL: a name looked up like a placeholder, or a literal. */
export type ArgValue = { readonly path: readonly string[] } | { readonly literal: string | number | boolean };

/** The choices an ACTION_SET offers; labels are templates. */
export interface ActionSetSpec {
  /** `value` null: the button sends its rendered label. */
  readonly buttons: readonly { readonly label: Template; readonly value: string | null }[];
  readonly selects: readonly { readonly label: Template; readonly options: readonly string[] }[];
  readonly textInputs: readonly { readonly label: Template }[];
}

/** A slot of a GATHER step. */
export interface SlotSpec {
  readonly name: string;
  readonly type: 'string' | 'number' | 'enum';
  /** Allowed values, for `enum[...]` only. */
  readonly options?: readonly string[];
  readonly prompt: Template;
  readonly validate?: PatternSpec;
}

/** One step of a compiled flow. IF blocks are flattened: a false condition jumps to `skipTo`. */
export type Step =
  | { readonly kind: 'gather'; readonly slots: readonly SlotSpec[] }
  /** Without a template (bare `RESPOND`), the language model words the answer. */
  | { readonly kind: 'respond'; readonly template?: Template }
  | { readonly kind: 'handoff'; readonly target: string; readonly reason: string }
  | { readonly kind: 'delegate'; readonly target: string; readonly task: Template; readonly as: string; readonly timeoutMs?: number }
  /** Parallel fan-out; without `as`, each result is stored under its agent's name. */
  | { readonly kind: 'delegate_all'; readonly targets: readonly string[]; readonly task: Template; readonly as?: string; readonly timeoutMs?: number }
  | { readonly kind: 'call'; readonly tool: string; readonly args: Readonly<Record<string, ArgValue>>; readonly as: string }
  | { readonly kind: 'actions'; readonly actions: ActionSetSpec }
  | { readonly kind: 'if'; readonly condition: Condition; readonly skipTo: number };

/** A compiled FLOW. */
export interface FlowProgram {
  readonly name: string;
  readonly triggers: readonly Trigger[];
  readonly steps: readonly Step[];
}

/** A top-level `HANDOFF: target WHEN condition`. */
export interface HandoffRule {
  readonly target: string;
  readonly condition: Condition;
  /** Recorded in the handoff trace event: the REASON text, else the condition as written. */
  readonly reason: string;
}

/** A top-level DELEGATE: run on each new message before HANDOFF rules, when its WHEN (if any) holds. */
export interface DelegateRule {
  readonly targets: readonly string[];
  readonly parallel: boolean;
  readonly task: Template;
  readonly as?: string;
  readonly timeoutMs?: number;
  readonly condition?: Condition;
}

/** A KNOWLEDGE entry; `keywords` are the normalised words of the question used for matching. */
export interface KnowledgeEntry {
  readonly question: string;
  readonly answer: Template;
  readonly keywords: readonly string[];
}

/** A compiled agent. Immutable (deep-frozen by compileAgent) and JSON round-trippable. */
export interface AgentProgram {
  readonly formatVersion: 1 | 2;
  readonly name: string;
  readonly description?: string;
  /** `builtin`, or `provider/model` answered through TurnHost.complete. */
  readonly model: string;
  readonly temperature?: number;
  readonly persona?: string;
  /** MEMORY: the store CODE tools use through ctx.memory. */
  readonly memoryStore?: string;
  readonly knowledge: readonly KnowledgeEntry[];
  /** Absent in format 1. */
  readonly tools?: readonly ToolSpec[];
  readonly flows: readonly FlowProgram[];
  /** Absent in format 1. */
  readonly delegates?: readonly DelegateRule[];
  readonly handoffs: readonly HandoffRule[];
  readonly fallback?: Template;
}
