import { ParleyError } from '../../runtime/index.js';
import type { AgentStore } from '../agents/agent-store.js';
import type { Deployment } from './deployment-records.js';
import type { DeploymentStore } from './deployment-store.js';

/**
 * The deployment a chat names by `deploymentId` or `endpointSlug` (not both), or undefined when
 * it names none. Another tenant's deployment, or one outside `projectId` when that is sent too,
 * is NOT_FOUND like a missing one.
 */
export function chatDeployment(deployments: DeploymentStore, tenantId: string, target: { deploymentId?: string | undefined; endpointSlug?: string | undefined; projectId?: string | undefined }): Deployment | undefined {
  if (target.deploymentId !== undefined && target.endpointSlug !== undefined) {
    throw new ParleyError('VALIDATION_ERROR', 'Send deploymentId or endpointSlug, not both', { field: 'endpointSlug' });
  }
  let deployment: Deployment | undefined;
  if (target.deploymentId !== undefined) deployment = deployments.byId(tenantId, target.deploymentId);
  else if (target.endpointSlug !== undefined) deployment = deployments.bySlug(tenantId, target.endpointSlug);
  else return undefined;
  if (!deployment || (target.projectId !== undefined && deployment.projectId !== target.projectId)) throw new ParleyError('NOT_FOUND', 'Deployment not found');
  return deployment;
}

/**
 * The entry agent of a new session on a deployment: the requested agent, else the deployment's
 * entryAgentName. The agent must be in the manifest (unknown agent: 404; not deployed: 400).
 */
export function deploymentEntryAgent(deployment: Deployment, requested: string | undefined, agents: AgentStore): string {
  const name = requested ?? deployment.entryAgentName;
  if (deployment.agentVersionManifest[name] !== undefined) return name;
  if (!agents.get(deployment.tenantId, deployment.projectId, name)) throw new ParleyError('NOT_FOUND', 'Agent not found');
  throw new ParleyError('VALIDATION_ERROR', `Agent "${name}" is not part of deployment ${deployment.id}`, { field: 'agentName' });
}
