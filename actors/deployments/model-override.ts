import type { AgentProgram } from '../language/index.js';
import type { ModelOverride } from './deployment-records.js';

/**
 * The program a deployment session runs: the pinned program with the deployment's model override
 * applied. Programs are frozen and shared, so an override makes a shallow copy.
 */
export function withModelOverride(program: AgentProgram | undefined, override: ModelOverride | undefined): AgentProgram | undefined {
  if (!program || override?.model === undefined || override.model === program.model) return program;
  return { ...program, model: override.model };
}
