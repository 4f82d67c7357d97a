import { Type } from '@sinclair/typebox';
import { ParleyError } from '../../runtime/index.js';
import { AGENT_NAME } from '../../actors/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { compileValidator } from '../validate.js';

const CreateProjectBody = compileValidator(
  Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 200 }), slug: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' })) },
    { additionalProperties: false },
  ),
);
const UpdateProjectBody = compileValidator(
  Type.Object(
    { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), defaultAgent: Type.Optional(Type.Union([Type.String({ pattern: AGENT_NAME.source }), Type.Null()])) },
    { additionalProperties: false },
  ),
);

/** Projects of the caller's tenant (not in the spec; docs/api.md). */
export const projectRoutes: RouteModule = (deps) => [
  {
    method: 'GET',
    path: '/api/projects',
    auth: 'principal',
    permission: 'project:read',
    handler: ({ principal }) => json({ success: true, projects: deps.tenancy.listProjects(principal.tenantId) }),
  },
  {
    method: 'POST',
    path: '/api/projects',
    auth: 'principal',
    permission: 'project:write',
    handler: async ({ principal, body }) => {
      const input = CreateProjectBody(body);
      const project = await deps.tenancy.createProject(principal.tenantId, input.name, input.slug);
      return json({ success: true, project }, 201);
    },
  },
  {
    method: 'GET',
    path: '/api/projects/{projectId}',
    auth: 'principal',
    permission: 'project:read',
    handler: ({ principal, params }) => json({ success: true, project: deps.tenancy.requireProject(principal.tenantId, params['projectId']!) }),
  },
  {
    method: 'PATCH',
    path: '/api/projects/{projectId}',
    auth: 'principal',
    permission: 'project:write',
    handler: async ({ principal, params, body }) => {
      const project = deps.tenancy.requireProject(principal.tenantId, params['projectId']!);
      const input = UpdateProjectBody(body);
      if (input.defaultAgent && !deps.agents.get(project.tenantId, project.id, input.defaultAgent)) {
        throw new ParleyError('VALIDATION_ERROR', `defaultAgent: no agent named "${input.defaultAgent}" in this project`, { field: 'defaultAgent' });
      }
      const updated = {
        ...project,
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.defaultAgent !== undefined ? { defaultAgent: input.defaultAgent } : {}),
        updatedAt: new Date().toISOString(),
      };
      await deps.tenancy.saveProject(updated);
      return json({ success: true, project: updated });
    },
  },
];
