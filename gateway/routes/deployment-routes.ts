import { Type } from '@sinclair/typebox';
import { isCuid, ParleyError } from '../../runtime/index.js';
import { DeploymentStore, ENVIRONMENTS, deploymentListItem, deploymentView, retiredSummary, type Activation, type Deployment, type Environment, type Project } from '../../actors/index.js';
import type { GatewayDeps, RouteModule } from '../app.js';
import { json } from '../http.js';
import { compileValidator, pagination } from '../validate.js';

const EnvironmentSchema = Type.Union(ENVIRONMENTS.map((e) => Type.Literal(e)));
const Label = Type.String({ minLength: 1, maxLength: 100 });
const MAX_ENTRIES = 100;

const CreateDeploymentBody = compileValidator(
  Type.Object(
    {
      environment: EnvironmentSchema,
      entryAgentName: Type.String({ minLength: 1, maxLength: 64 }),
      agentVersionManifest: Type.Record(Type.String(), Type.Union([Type.String({ minLength: 1, maxLength: 16 }), Type.Integer({ minimum: 1 })]), { maxProperties: MAX_ENTRIES }),
      label: Type.Optional(Label),
      description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
      modelOverrides: Type.Optional(
        Type.Record(
          Type.String(),
          Type.Object(
            {
              model: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
              temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
              maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
            },
            { additionalProperties: false },
          ),
          { maxProperties: MAX_ENTRIES },
        ),
      ),
      settingsVersionId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
      workflowVersionManifest: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 1 })]), { maxProperties: MAX_ENTRIES })),
    },
    { additionalProperties: false },
  ),
);
const PromoteBody = compileValidator(Type.Object({ targetEnvironment: EnvironmentSchema, label: Type.Optional(Label) }, { additionalProperties: false }));

/** Channel connections do not exist yet, so no channel can point at a deployment (docs/deployments.md). */
const CHANNEL_COUNT = 0;

/** A create, rollback or promote answer: the deployment now active, and the one it replaced. */
/** Records a deployment change as a `deployment` analytics event (and the retirement it caused). */
function recordChange(deps: GatewayDeps, kind: string, deployment: Deployment, by: string, replaced?: Deployment | null): void {
  const at = new Date().toISOString();
  const record = (type: string, d: Deployment): void =>
    deps.events.record({
      tenantId: d.tenantId, projectId: d.projectId, category: 'deployment', event_type: type, agent_name: d.entryAgentName, session_id: null, channel: null,
      timestamp: at, duration_ms: null, error: null, span_id: null, parent_span_id: null,
      metadata: { deploymentId: d.id, environment: d.environment, status: d.status, by },
    });
  record(`deployment_${kind}`, deployment);
  if (replaced) record('deployment_retired', replaced);
}

function activationBody(a: Activation): Record<string, unknown> {
  return { success: true, deployment: deploymentView(a.deployment), replaced: a.retired ? retiredSummary(a.retired) : null };
}

function environmentParam(query: URLSearchParams): Environment | undefined {
  const raw = query.get('environment');
  if (raw === null || raw === '') return undefined;
  if (!(ENVIRONMENTS as readonly string[]).includes(raw)) throw new ParleyError('VALIDATION_ERROR', `environment must be one of ${ENVIRONMENTS.join(', ')}`, { field: 'environment' });
  return raw as Environment;
}

/** Deployments of a project: create, list, detail, retire, rollback and promote (docs/deployments.md). */
export const deploymentRoutes: RouteModule = (deps) => {
  const deployments = DeploymentStore.of(deps.store);
  const projectOf = (tenantId: string, params: Record<string, string>): Project => deps.tenancy.requireProject(tenantId, params['projectId']!);
  const deploymentOf = (project: Project, params: Record<string, string>): Deployment => {
    const id = params['deploymentId']!;
    if (!isCuid(id)) throw new ParleyError('NOT_FOUND', 'Deployment not found');
    return deployments.require(project.tenantId, project.id, id);
  };
  const base = '/api/projects/{projectId}/deployments';
  return [
    {
      method: 'POST',
      path: base,
      auth: 'principal',
      permission: 'deployment:create',
      handler: async ({ principal, params, body }) => {
        const project = projectOf(principal.tenantId, params);
        const input = CreateDeploymentBody(body);
        const activation = await deployments.create(project, input, principal.subject, deps.agents);
        recordChange(deps, 'created', activation.deployment, principal.subject, activation.retired);
        return json(activationBody(activation), 201);
      },
    },
    {
      method: 'GET',
      path: base,
      auth: 'principal',
      permission: 'deployment:read',
      handler: ({ principal, params, req }) => {
        const project = projectOf(principal.tenantId, params);
        const { limit, offset } = pagination(req.query);
        const page = deployments.list(project.tenantId, project.id, { environment: environmentParam(req.query), limit, offset });
        return json({
          success: true, deployments: page.deployments.map(deploymentListItem),
          pagination: { total: page.total, limit, offset, hasMore: offset + page.deployments.length < page.total },
        });
      },
    },
    {
      method: 'GET',
      path: `${base}/{deploymentId}`,
      auth: 'principal',
      permission: 'deployment:read',
      handler: ({ principal, params }) => {
        const deployment = deploymentOf(projectOf(principal.tenantId, params), params);
        return json({ success: true, deployment: deploymentView(deployment, CHANNEL_COUNT) });
      },
    },
    {
      method: 'POST',
      path: `${base}/{deploymentId}/retire`,
      auth: 'principal',
      permission: 'deployment:create',
      body: 'none',
      handler: async ({ principal, params }) => {
        const project = projectOf(principal.tenantId, params);
        const retired = await deployments.retire(project.tenantId, project.id, deploymentOf(project, params).id);
        recordChange(deps, 'retired', retired, principal.subject);
        return json({ success: true, deployment: retiredSummary(retired) });
      },
    },
    {
      method: 'POST',
      path: `${base}/{deploymentId}/rollback`,
      auth: 'principal',
      permission: 'deployment:create',
      body: 'none',
      handler: async ({ principal, params }) => {
        const project = projectOf(principal.tenantId, params);
        const activation = await deployments.rollback(project.tenantId, project.id, deploymentOf(project, params).id);
        recordChange(deps, 'rolled_back', activation.deployment, principal.subject, activation.retired);
        return json(activationBody(activation));
      },
    },
    {
      method: 'POST',
      path: `${base}/{deploymentId}/promote`,
      auth: 'principal',
      permission: 'deployment:create',
      handler: async ({ principal, params, body }) => {
        const project = projectOf(principal.tenantId, params);
        const source = deploymentOf(project, params);
        const input = PromoteBody(body);
        const activation = await deployments.promote(project, source.id, input, principal.subject, deps.agents);
        recordChange(deps, 'promoted', activation.deployment, principal.subject, activation.retired);
        return json(activationBody(activation), 201);
      },
    },
  ];
};
