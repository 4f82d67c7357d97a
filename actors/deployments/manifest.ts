import { ParleyError } from '../../runtime/index.js';
import type { AgentStore } from '../agents/agent-store.js';
import type { DeploymentInput, ManifestVersion, ModelOverride } from './deployment-records.js';

/** The manifest keyword that pins the latest compiled version at the moment a session starts. */
export const AUTO_VERSION = 'auto';

/** The only model this version of Parley runs (the compiler refuses any other MODEL too). */
const KNOWN_MODELS: ReadonlySet<string> = new Set(['builtin']);

/** The checked, normalised agent part of a deployment. */
export interface CheckedManifest {
  entryAgentName: string;
  agentVersionManifest: Record<string, ManifestVersion>;
  modelOverrides: Record<string, ModelOverride>;
}

/**
 * Checks a deployment's agents against the project as it is now: every manifest agent exists,
 * a pinned version exists, 'auto' has something compiled to resolve to, the entry agent is in
 * the manifest, and overrides name manifest agents and known models. Versions come back as
 * strings ("3" or "auto"). Errors are VALIDATION_ERROR naming the field, agent and version.
 */
export function checkManifest(tenantId: string, projectId: string, input: Pick<DeploymentInput, 'entryAgentName' | 'agentVersionManifest' | 'modelOverrides'>, agents: AgentStore): CheckedManifest {
  const manifest: Record<string, ManifestVersion> = {};
  const names = Object.keys(input.agentVersionManifest);
  if (names.length === 0) throw invalid('agentVersionManifest must name at least one agent', 'agentVersionManifest');
  for (const name of names) {
    const field = `agentVersionManifest.${name}`;
    const raw = input.agentVersionManifest[name]!;
    const agent = agents.get(tenantId, projectId, name);
    if (!agent) throw invalid(`agentVersionManifest names agent "${name}", which does not exist in this project`, field, { agent: name });
    if (raw === AUTO_VERSION) {
      if (agent.versionCount === 0) throw invalid(`Agent "${name}" has no compiled version for 'auto' to resolve to: compile it first`, field, { agent: name, version: AUTO_VERSION });
      manifest[name] = AUTO_VERSION;
      continue;
    }
    const version = typeof raw === 'number' ? raw : /^[1-9][0-9]{0,8}$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(version) || version < 1) throw invalid(`agentVersionManifest.${name} must be a version number or 'auto' (got ${JSON.stringify(raw)})`, field, { agent: name, version: raw });
    if (!agents.version(tenantId, projectId, name, version)) {
      throw invalid(`Agent "${name}" has no version ${version} (it has ${agent.versionCount} compiled version${agent.versionCount === 1 ? '' : 's'})`, field, { agent: name, version: String(version) });
    }
    manifest[name] = String(version);
  }
  if (!agents.get(tenantId, projectId, input.entryAgentName)) {
    throw invalid(`entryAgentName "${input.entryAgentName}" is not an agent of this project`, 'entryAgentName', { agent: input.entryAgentName });
  }
  if (manifest[input.entryAgentName] === undefined) {
    throw invalid(`entryAgentName "${input.entryAgentName}" must also be listed in agentVersionManifest`, 'entryAgentName', { agent: input.entryAgentName });
  }
  const overrides = input.modelOverrides ?? {};
  for (const [name, override] of Object.entries(overrides)) {
    if (manifest[name] === undefined) throw invalid(`modelOverrides names agent "${name}", which is not in agentVersionManifest`, `modelOverrides.${name}`, { agent: name });
    if (override.model !== undefined && !KNOWN_MODELS.has(override.model)) {
      throw invalid(`modelOverrides.${name}.model "${override.model}" is not available; this version of Parley runs: ${[...KNOWN_MODELS].join(', ')}`, `modelOverrides.${name}.model`, { agent: name });
    }
  }
  return { entryAgentName: input.entryAgentName, agentVersionManifest: manifest, modelOverrides: overrides };
}

/** The concrete version of each manifest agent now: pinned numbers as they are, 'auto' as the latest compiled version. */
export function resolveManifest(tenantId: string, projectId: string, manifest: Record<string, ManifestVersion>, agents: AgentStore): Record<string, number> {
  const resolved: Record<string, number> = {};
  for (const [name, version] of Object.entries(manifest)) {
    if (version !== AUTO_VERSION) {
      resolved[name] = Number(version);
      continue;
    }
    const latest = agents.get(tenantId, projectId, name)?.versionCount ?? 0;
    if (latest === 0) throw new ParleyError('CONFLICT', `Agent "${name}" of this deployment has no compiled version`, { agent: name });
    resolved[name] = latest;
  }
  return resolved;
}

function invalid(message: string, field: string, extra: Record<string, unknown> = {}): ParleyError {
  return new ParleyError('VALIDATION_ERROR', message, { field, ...extra });
}
