/**
 * Per-deployment model overrides: per agent name, another model, provider or temperature than
 * the agent's MODEL: line. A deployment stores one ModelOverrides object; the router applies it.
 */
import { Type, type Static } from '@sinclair/typebox';

/** What one agent's calls change (a superset of actors/deployments' ModelOverride, which is assignable to it). */
export interface AgentModelOverride {
  /** "provider/model" replaces both; a bare "model" replaces the model under the same (or `provider`'s) provider. */
  model?: string;
  /** Replaces the agent's TEMPERATURE. */
  temperature?: number;
  /** Replaces the provider (a name configured in the project's model settings), keeping the model. */
  provider?: string;
  /** Replaces the provider's maxTokens setting. */
  maxTokens?: number;
}

/** Agent name -> its override; the key "*" applies to every agent without its own entry. */
export type ModelOverrides = Record<string, AgentModelOverride>;

/** The TypeBox schema of ModelOverrides, for routes that accept it (unknown fields refused). */
export const ModelOverridesSchema = Type.Record(
  Type.String({ pattern: '^(\\*|[a-z][a-z0-9_]{0,63})$' }),
  Type.Object(
    {
      model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
      provider: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' })),
      maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    },
    { additionalProperties: false },
  ),
  { maxProperties: 256 },
);

/** The static type checked by ModelOverridesSchema. */
export type ModelOverridesBody = Static<typeof ModelOverridesSchema>;

/** The override that applies to an agent: its own, else "*", else none. */
export function overrideFor(overrides: ModelOverrides | undefined, agentName: string): AgentModelOverride | undefined {
  if (!overrides) return undefined;
  if (Object.hasOwn(overrides, agentName)) return overrides[agentName];
  return Object.hasOwn(overrides, '*') ? overrides['*'] : undefined;
}
