/** Environments a deployment can target. */
export const ENVIRONMENTS = ['dev', 'staging', 'production'] as const;

/** One environment name. */
export type Environment = (typeof ENVIRONMENTS)[number];

/** A manifest entry: a compiled version number written as a string ("3"), or 'auto' (latest at session start). */
export type ManifestVersion = string;

/** Per-agent model configuration a deployment applies on top of the agent's own MODEL. */
export interface ModelOverride {
  model?: string;
  temperature?: number;
  maxTokens?: number;
}

/** A deployment as stored: an immutable pin of agent versions for one environment of a project. */
export interface Deployment {
  id: string;
  tenantId: string;
  projectId: string;
  environment: Environment;
  status: 'active' | 'retired';
  label: string | null;
  description: string | null;
  /** Generated, globally unique; chats may name the deployment by it. */
  endpointSlug: string;
  entryAgentName: string;
  agentVersionManifest: Record<string, ManifestVersion>;
  modelOverrides: Record<string, ModelOverride>;
  settingsVersionId: string | null;
  workflowVersionManifest: Record<string, string>;
  /** The deployment this one was promoted from, or null. */
  promotedFromId: string | null;
  createdAt: string;
  createdBy: string;
  retiredAt: string | null;
}

/** What a caller supplies to create a deployment (already shape-checked at the boundary). */
export interface DeploymentInput {
  environment: Environment;
  entryAgentName: string;
  agentVersionManifest: Record<string, string | number>;
  label?: string | undefined;
  description?: string | null | undefined;
  modelOverrides?: Record<string, ModelOverride> | undefined;
  settingsVersionId?: string | undefined;
  workflowVersionManifest?: Record<string, string | number> | undefined;
}

/** The short form of a deployment that retire, rollback and promote report for a retired one. */
export interface RetiredSummary {
  id: string;
  status: 'retired';
  retiredAt: string;
}

/** The API's full Deployment (detail, create, rollback, promote); channelCount only on detail. */
export function deploymentView(d: Deployment, channelCount?: number): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: d.id, projectId: d.projectId, environment: d.environment, status: d.status, label: d.label,
    description: d.description, endpointSlug: d.endpointSlug, entryAgentName: d.entryAgentName,
    agentVersionManifest: d.agentVersionManifest, modelOverrides: d.modelOverrides,
    settingsVersionId: d.settingsVersionId, workflowVersionManifest: d.workflowVersionManifest,
    promotedFromId: d.promotedFromId, createdAt: d.createdAt, createdBy: d.createdBy, retiredAt: d.retiredAt,
  };
  if (channelCount !== undefined) view['channelCount'] = channelCount;
  return view;
}

/** The list item the spec shows. */
export function deploymentListItem(d: Deployment): Record<string, unknown> {
  return { id: d.id, projectId: d.projectId, environment: d.environment, status: d.status, label: d.label, endpointSlug: d.endpointSlug, createdAt: d.createdAt };
}

/** The short form of a retired deployment. */
export function retiredSummary(d: Deployment): RetiredSummary {
  return { id: d.id, status: 'retired', retiredAt: d.retiredAt! };
}
