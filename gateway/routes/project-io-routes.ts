import { ParleyError } from '../../runtime/index.js';
import { projectIoActorKey, type Principal, type ProjectIoMessage, type ProjectIoReply } from '../../actors/index.js';
import type { GatewayDeps, RouteModule } from '../app.js';
import { json } from '../http.js';

/** Import body ceiling (spec Limits: import endpoints 60 MB); the transport answers 413 above it. */
export const IMPORT_BODY_LIMIT = 60 * 1024 * 1024;
/** Hashing, unzipping and compiling a large archive can outlast the default ask deadline. */
const PROJECT_IO_TIMEOUT_MS = 120_000;

const BASE = '/api/projects/{projectId}/project-io';

function projectInfo(deps: GatewayDeps, principal: Principal, params: Record<string, string>): { tenantId: string; project: { id: string; name: string; slug: string } } {
  const project = deps.tenancy.requireProject(principal.tenantId, params['projectId']!);
  return { tenantId: project.tenantId, project: { id: project.id, name: project.name, slug: project.slug } };
}

function flag(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  throw new ParleyError('VALIDATION_ERROR', `${name} must be 'true' or 'false'`, { field: name });
}

function oneOf<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[], fallback: T): T {
  const value = query.get(name);
  if (value === null) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ParleyError('VALIDATION_ERROR', `${name} must be one of ${allowed.join(', ')}`, { field: name });
}

/** Project export (preview, folder or zip) and import (docs/project-io.md). The work runs on the project's project-io actor. */
export const projectIoRoutes: RouteModule = (deps) => {
  const ask = (tenantId: string, projectId: string, message: ProjectIoMessage, requestId: string): Promise<ProjectIoReply> =>
    deps.actors.ask<ProjectIoReply>({ kind: 'project-io', key: projectIoActorKey(tenantId, projectId) }, message, { requestId, timeoutMs: PROJECT_IO_TIMEOUT_MS });
  return [
    {
      method: 'GET',
      path: `${BASE}/export/preview`,
      auth: 'principal',
      permission: 'project:export',
      handler: async ({ principal, params, req }) => {
        const { tenantId, project } = projectInfo(deps, principal, params);
        const preview = await ask(tenantId, project.id, { type: 'preview', tenantId, project }, req.requestId);
        return json({ success: true, ...preview });
      },
    },
    {
      method: 'GET',
      path: `${BASE}/export`,
      auth: 'principal',
      permission: 'project:export',
      handler: async ({ principal, params, req }) => {
        const { tenantId, project } = projectInfo(deps, principal, params);
        const options = { format: oneOf(req.query, 'format', ['folder', 'zip'] as const, 'folder'), includeDeployments: flag(req.query, 'include_deployments') };
        const exported = await ask(tenantId, project.id, { type: 'export', tenantId, project, options }, req.requestId);
        return json({ success: true, ...exported });
      },
    },
    {
      method: 'POST',
      path: `${BASE}/import`,
      auth: 'principal',
      // Import writes agents (agent:write, checked by the gateway) and takes an export (project:export, checked below).
      permission: 'agent:write',
      body: 'raw',
      bodyLimit: IMPORT_BODY_LIMIT,
      handler: async ({ principal, params, req }) => {
        if (!principal.permissions.has('project:export')) {
          throw new ParleyError('FORBIDDEN', 'This credential lacks the permission project:export', { permission: 'project:export' });
        }
        const { tenantId, project } = projectInfo(deps, principal, params);
        const options = { mode: oneOf(req.query, 'mode', ['merge'] as const, 'merge'), dryRun: flag(req.query, 'dryRun'), createdBy: principal.subject };
        const contentType = req.headers['content-type'];
        if (!contentType) throw new ParleyError('BAD_REQUEST', 'Content-Type must be application/json (the folder form) or application/zip', { field: 'content-type' });
        if (req.body.length === 0) throw new ParleyError('BAD_REQUEST', 'The request body is empty: send the export as JSON or as a ZIP');
        const result = await ask(tenantId, project.id, { type: 'import', tenantId, project, contentType, body: req.body, options }, req.requestId);
        return json({ success: true, ...result });
      },
    },
  ];
};
