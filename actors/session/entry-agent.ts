import { ParleyError } from '../../runtime/index.js';
import type { AgentStore } from '../agents/agent-store.js';
import type { Project } from '../tenancy/records.js';

/**
 * Picks the agent a new session starts with (docs/chat.md): the agent the request names; else
 * the project's defaultAgent; else the oldest agent of the project that has a compiled version.
 */
export function chooseEntryAgent(project: Project, agents: AgentStore, requested: string | undefined): { name: string; version: number } {
  if (requested !== undefined) {
    const agent = agents.get(project.tenantId, project.id, requested);
    if (!agent) throw new ParleyError('NOT_FOUND', 'Agent not found');
    if (agent.versionCount === 0) throw noVersion(project.id, requested);
    return { name: agent.name, version: agent.versionCount };
  }
  if (project.defaultAgent) {
    const agent = agents.get(project.tenantId, project.id, project.defaultAgent);
    if (agent && agent.versionCount > 0) return { name: agent.name, version: agent.versionCount };
  }
  const candidates = agents.list(project.tenantId, project.id).filter((a) => a.versionCount > 0);
  candidates.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.name.localeCompare(b.name));
  const first = candidates[0];
  if (!first) {
    throw new ParleyError('VALIDATION_ERROR', 'This project has no compiled agent yet: create one and compile it with POST /api/projects/{projectId}/agents/{agentName}/versions', { field: 'projectId' });
  }
  return { name: first.name, version: first.versionCount };
}

function noVersion(projectId: string, name: string): ParleyError {
  return new ParleyError('VALIDATION_ERROR', `Agent "${name}" has no compiled version yet: compile it with POST /api/projects/${projectId}/agents/${name}/versions`, { field: 'agentName' });
}
