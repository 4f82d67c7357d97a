import { DEFAULT_VOICE_HOURS, MAX_VOICE_HOURS, readVoiceAnalytics } from '../../actors/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { intParam } from '../validate.js';
import { eventStoreOf } from './trace-routes.js';

/** Voice call quality per hour and in summary over the last `hours` hours (permission session:read). */
export const voiceAnalyticsRoutes: RouteModule = (deps) => {
  const events = eventStoreOf(deps);
  const analyticsOf = (tenantId: string, projectId: string, query: URLSearchParams) => {
    const project = deps.tenancy.requireProject(tenantId, projectId);
    const hours = intParam(query, 'hours', DEFAULT_VOICE_HOURS, 1, MAX_VOICE_HOURS);
    return readVoiceAnalytics(events, project.tenantId, project.id, hours);
  };
  return [
    {
      method: 'GET',
      path: '/api/projects/{projectId}/voice-analytics/hourly',
      auth: 'principal',
      permission: 'session:read',
      handler: ({ principal, params, req }) => json({ success: true, data: analyticsOf(principal.tenantId, params['projectId']!, req.query).hourly() }),
    },
    {
      method: 'GET',
      path: '/api/projects/{projectId}/voice-analytics/summary',
      auth: 'principal',
      permission: 'session:read',
      handler: ({ principal, params, req }) => json({ success: true, data: analyticsOf(principal.tenantId, params['projectId']!, req.query).summary() }),
    },
  ];
};
