import { referencedAgents, type AgentProgram } from '../language/index.js';

/** An edge of the project's dependency graph: an agent handing off / delegating to another agent, or using a tool. */
export interface DependencyEdge {
  from: string;
  to: string;
  type: 'handoff' | 'tool';
}

/** A tool an agent declares. */
export interface ToolRef {
  name: string;
  toolType: string;
}

/** A problem found in the graph; `valid` is false when there is at least one. */
export interface GraphError {
  code: 'DANGLING_REFERENCE' | 'COMPILE_ERROR';
  agent: string;
  message: string;
  /** The missing agent (DANGLING_REFERENCE). */
  target?: string;
  line?: number;
  column?: number;
}

/**
 * The tools a program declares, from its optional `tools` field (TOOLS is being added to the
 * language: format-2 programs carry ToolSpec objects {kind: 'http' | 'code', name, ...}). Read
 * loosely on purpose: an array of names or of objects with a `name` and a `kind`/`type`/`toolType`,
 * or a map from name to such an object. Any other shape, or no field, yields no tools.
 */
export function programTools(program: AgentProgram): ToolRef[] {
  const raw = (program as unknown as { tools?: unknown }).tools;
  const found = new Map<string, ToolRef>();
  const add = (name: unknown, spec: unknown): void => {
    if (typeof name !== 'string' || name.length === 0 || found.has(name)) return;
    const s = (typeof spec === 'object' && spec !== null ? spec : {}) as Record<string, unknown>;
    const type = [s['toolType'], s['type'], s['kind']].find((t): t is string => typeof t === 'string');
    found.set(name, { name, toolType: type ?? 'unknown' });
  };
  if (Array.isArray(raw)) {
    for (const item of raw) {
      if (typeof item === 'string') add(item, undefined);
      else if (typeof item === 'object' && item !== null) add((item as Record<string, unknown>)['name'], item);
    }
  } else if (typeof raw === 'object' && raw !== null) {
    for (const [name, spec] of Object.entries(raw)) add(name, spec);
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The edges leaving one agent. Every agent reference (HANDOFF rules and steps, DELEGATE steps)
 * is a `handoff` edge: the spec names only the types handoff and tool.
 */
export function programEdges(program: AgentProgram): DependencyEdge[] {
  return [
    ...referencedAgents(program).map((to): DependencyEdge => ({ from: program.name, to, type: 'handoff' })),
    ...programTools(program).map((t): DependencyEdge => ({ from: program.name, to: t.name, type: 'tool' })),
  ];
}

/** One error per handoff edge whose target is not among `agents`. */
export function danglingReferences(edges: readonly DependencyEdge[], agents: ReadonlySet<string>): GraphError[] {
  return edges
    .filter((e) => e.type === 'handoff' && !agents.has(e.to))
    .map((e) => ({ code: 'DANGLING_REFERENCE', agent: e.from, target: e.to, message: `Agent "${e.from}" refers to agent "${e.to}", which does not exist in the project` }));
}
