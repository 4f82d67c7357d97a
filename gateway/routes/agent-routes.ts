import { Type } from '@sinclair/typebox';
import { ParleyError } from '../../runtime/index.js';
import { AGENT_NAME, DeploymentStore, MAX_DSL_LENGTH, agentActorKey, type AgentMessage, type AgentRecord, type CompileReply, type Project } from '../../actors/index.js';
import type { GatewayDeps, RouteModule } from '../app.js';
import { json } from '../http.js';
import { compileValidator } from '../validate.js';

const CreateAgentBody = compileValidator(
  Type.Object(
    {
      name: Type.String({ pattern: AGENT_NAME.source }),
      dslContent: Type.String({ minLength: 1, maxLength: MAX_DSL_LENGTH }),
      description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    },
    { additionalProperties: false },
  ),
);
const UpdateDslBody = compileValidator(
  Type.Object({ dslContent: Type.String({ minLength: 1, maxLength: MAX_DSL_LENGTH }) }, { additionalProperties: false }),
);

/**
 * The spec's ProjectAgent. activeVersions maps each environment with an active deployment that
 * includes the agent to its version there ('auto' shown as the latest version now).
 */
function projectAgentView(project: Project, a: AgentRecord, withDsl: boolean, activeVersions: Map<string, Record<string, string>>): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: a.id, name: a.name, agentPath: `${project.slug}/${a.name}`, description: a.description,
    versionCount: a.versionCount, activeVersions: activeVersions.get(a.name) ?? {}, createdAt: a.createdAt, updatedAt: a.updatedAt,
  };
  if (withDsl) view['dslContent'] = a.dslContent;
  return view;
}

function agentName(params: Record<string, string>, key: string): string {
  const name = params[key]!;
  // A name that cannot exist is simply not found (no hint about what names look like).
  if (!AGENT_NAME.test(name)) throw new ParleyError('NOT_FOUND', 'Agent not found');
  return name;
}

/** Per agent, environment -> version of the project's active deployments. */
function activeVersionsOf(deps: GatewayDeps, project: Project): Map<string, Record<string, string>> {
  return DeploymentStore.of(deps.store).activeVersions(project.tenantId, project.id, deps.agents);
}

function projectOf(deps: GatewayDeps, tenantId: string, params: Record<string, string>): Project {
  return deps.tenancy.requireProject(tenantId, params['projectId']!);
}

/** The project and agent a /api/projects/{projectId}/agents/{agentName}… path names, or NOT_FOUND. */
function projectAgentOf(deps: GatewayDeps, tenantId: string, params: Record<string, string>): { project: Project; agent: AgentRecord } {
  const project = projectOf(deps, tenantId, params);
  return { project, agent: deps.agents.require(project.tenantId, project.id, agentName(params, 'agentName')) };
}

/** Agent discovery, project agents, the working copy and compiled versions. */
export const agentRoutes: RouteModule = (deps) => [
  {
    method: 'GET',
    path: '/api/agents',
    auth: 'principal',
    permission: 'agent:read',
    handler: ({ principal, req }) => {
      const projectId = req.query.get('projectId');
      const agents = projectId ? deps.agents.list(principal.tenantId, projectOf(deps, principal.tenantId, { projectId }).id) : deps.agents.listTenant(principal.tenantId);
      return json({ success: true, total: agents.length, agents: agents.map((a) => ({ id: a.id, name: a.name })) });
    },
  },
  {
    method: 'GET',
    path: '/api/agents/{name}',
    auth: 'principal',
    permission: 'agent:read',
    handler: ({ principal, params, req }) => {
      const name = agentName(params, 'name');
      const projectId = req.query.get('projectId');
      const projects = projectId ? [projectOf(deps, principal.tenantId, { projectId })] : deps.tenancy.listProjects(principal.tenantId);
      // Without projectId the oldest project holding that name wins (docs/api.md).
      for (const project of projects) {
        const agent = deps.agents.get(principal.tenantId, project.id, name);
        if (agent) return json({ success: true, agent: { id: agent.id, name: agent.name, dslContent: agent.dslContent } }, 200, { 'cache-control': 'private, max-age=300' });
      }
      throw new ParleyError('NOT_FOUND', 'Agent not found');
    },
  },
  {
    method: 'GET',
    path: '/api/projects/{projectId}/agents',
    auth: 'principal',
    permission: 'agent:read',
    handler: ({ principal, params }) => {
      const project = projectOf(deps, principal.tenantId, params);
      const active = activeVersionsOf(deps, project);
      return json({ success: true, agents: deps.agents.list(project.tenantId, project.id).map((a) => projectAgentView(project, a, false, active)) });
    },
  },
  {
    method: 'POST',
    path: '/api/projects/{projectId}/agents',
    auth: 'principal',
    permission: 'agent:write',
    handler: async ({ principal, params, body }) => {
      const project = projectOf(deps, principal.tenantId, params);
      const input = CreateAgentBody(body);
      const agent = await deps.agents.create(project.tenantId, project.id, { name: input.name, dslContent: input.dslContent, description: input.description ?? null });
      return json({ success: true, agent: projectAgentView(project, agent, true, activeVersionsOf(deps, project)) }, 201);
    },
  },
  {
    method: 'GET',
    path: '/api/projects/{projectId}/agents/{agentName}',
    auth: 'principal',
    permission: 'agent:read',
    handler: ({ principal, params }) => {
      const { project, agent } = projectAgentOf(deps, principal.tenantId, params);
      return json({ success: true, agent: projectAgentView(project, agent, true, activeVersionsOf(deps, project)) });
    },
  },
  {
    method: 'PUT',
    path: '/api/projects/{projectId}/agents/{agentName}/dsl',
    auth: 'principal',
    permission: 'agent:write',
    handler: async ({ principal, params, body }) => {
      // A missing agent is a 404 before the body is judged, like a missing project.
      const { project, agent: current } = projectAgentOf(deps, principal.tenantId, params);
      const { dslContent } = UpdateDslBody(body);
      const agent = await deps.agents.updateDsl(project.tenantId, project.id, current.name, dslContent);
      return json({ success: true, updatedAt: agent.updatedAt });
    },
  },
  {
    method: 'GET',
    path: '/api/projects/{projectId}/agents/{agentName}/versions',
    auth: 'principal',
    permission: 'agent:read',
    handler: ({ principal, params }) => {
      const { project, agent } = projectAgentOf(deps, principal.tenantId, params);
      return json({ success: true, versions: deps.agents.listVersions(project.tenantId, project.id, agent.name) });
    },
  },
  {
    method: 'POST',
    path: '/api/projects/{projectId}/agents/{agentName}/versions',
    auth: 'principal',
    permission: 'agent:write',
    body: 'none',
    handler: async ({ principal, params, req }) => {
      const { project, agent } = projectAgentOf(deps, principal.tenantId, params);
      const message: AgentMessage = { type: 'compile', tenantId: project.tenantId, projectId: project.id, agentName: agent.name, createdBy: principal.subject };
      // Compiling runs on the agent's actor: off the gateway thread, one compile at a time per agent.
      const version = await deps.actors.ask<CompileReply>({ kind: 'agent', key: agentActorKey(project.tenantId, project.id, agent.name) }, message, { requestId: req.requestId });
      return json({ success: true, version }, 201);
    },
  },
];
