/**
 * The compiled form of an agent: plain JSON data (no functions, no RegExp objects), safe to store
 * with msgpack and to send between threads. Regular expressions are kept as source + flags and
 * built lazily by the interpreter (see builtin-model.ts).
 */

/** Current format of AgentProgram; bump when the shape changes incompatibly. */
export const PROGRAM_FORMAT_VERSION = 1;

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
  | { readonly kind: 'compare'; readonly subject: readonly string[]; readonly op: CompareOp; readonly value: string | number };

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
  | { readonly kind: 'respond'; readonly template: Template }
  | { readonly kind: 'handoff'; readonly target: string; readonly reason: string }
  | { readonly kind: 'delegate'; readonly target: string; readonly task: Template; readonly as: string }
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

/** A KNOWLEDGE entry; `keywords` are the normalised words of the question used for matching. */
export interface KnowledgeEntry {
  readonly question: string;
  readonly answer: Template;
  readonly keywords: readonly string[];
}

/** A compiled agent. Immutable (deep-frozen by compileAgent) and JSON round-trippable. */
export interface AgentProgram {
  readonly formatVersion: 1;
  readonly name: string;
  readonly description?: string;
  readonly model: string;
  readonly persona?: string;
  readonly knowledge: readonly KnowledgeEntry[];
  readonly flows: readonly FlowProgram[];
  readonly handoffs: readonly HandoffRule[];
  readonly fallback?: Template;
}
