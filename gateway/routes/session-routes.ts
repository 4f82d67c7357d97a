import { sessionView } from '../../actors/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { pagination } from '../validate.js';

/** Sessions of a project: list (newest first) and detail with handoffCount. */
export const sessionRoutes: RouteModule = (deps) => [
  {
    method: 'GET',
    path: '/api/projects/{projectId}/sessions',
    auth: 'principal',
    permission: 'session:read',
    handler: ({ principal, params, req }) => {
      const project = deps.tenancy.requireProject(principal.tenantId, params['projectId']!);
      const { limit, offset } = pagination(req.query);
      const { sessions, total } = deps.sessions.list(project.tenantId, project.id, limit, offset);
      return json({ success: true, sessions: sessions.map(sessionView), pagination: { total, limit, offset, hasMore: offset + sessions.length < total } });
    },
  },
  {
    method: 'GET',
    path: '/api/projects/{projectId}/sessions/{sessionId}',
    auth: 'principal',
    permission: 'session:read',
    handler: ({ principal, params }) => {
      const project = deps.tenancy.requireProject(principal.tenantId, params['projectId']!);
      return json({ success: true, session: sessionView(deps.sessions.require(project.tenantId, project.id, params['sessionId']!)) });
    },
  },
  {
    method: 'GET',
    path: '/api/projects/{projectId}/sessions/{sessionId}/messages',
    auth: 'principal',
    permission: 'session:read',
    handler: ({ principal, params }) => {
      const project = deps.tenancy.requireProject(principal.tenantId, params['projectId']!);
      const session = deps.sessions.require(project.tenantId, project.id, params['sessionId']!);
      return json({ success: true, messages: deps.sessions.transcript(project.tenantId, session.id) });
    },
  },
];
