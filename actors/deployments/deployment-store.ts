import { randomBytes } from 'node:crypto';
import { cuid, ParleyError, type Collection, type Store } from '../../runtime/index.js';
import type { AgentStore } from '../agents/agent-store.js';
import type { Project } from '../tenancy/records.js';
import type { Deployment, DeploymentInput, Environment } from './deployment-records.js';
import { AUTO_VERSION, checkManifest } from './manifest.js';

/** A deployment that became active and the one it retired in its environment, if any. */
export interface Activation {
  deployment: Deployment;
  retired: Deployment | undefined;
}

interface SlugOwner {
  tenantId: string;
  projectId: string;
  id: string;
}

const stores = new WeakMap<Store, DeploymentStore>();
const SLUG_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Deployments keyed [tenantId, projectId, id], with three indexes kept in the same transactions:
 * [tenantId, id] -> projectId (chats name a deployment without its project), [endpointSlug] ->
 * owner (slugs are unique across the service), and [tenantId, projectId, environment] -> id of
 * the one active deployment there (docs/deployments.md).
 */
export class DeploymentStore {
  readonly #store: Store;
  readonly #deployments: Collection<Deployment>;
  readonly #byId: Collection<string>;
  readonly #bySlug: Collection<SlugOwner>;
  readonly #active: Collection<string>;

  constructor(store: Store) {
    this.#store = store;
    this.#deployments = store.collection('deployments');
    this.#byId = store.collection('deploymentIds');
    this.#bySlug = store.collection('deploymentSlugs');
    this.#active = store.collection('activeDeployments');
  }

  /** One shared instance per store (it holds no state of its own beyond collection handles). */
  static of(store: Store): DeploymentStore {
    let s = stores.get(store);
    if (!s) stores.set(store, (s = new DeploymentStore(store)));
    return s;
  }

  /**
   * Creates an active deployment after checking its agents (manifest.ts). The deployment active in
   * that environment before, if any, is retired in the same transaction.
   */
  async create(project: Project, input: DeploymentInput, createdBy: string, agents: AgentStore): Promise<Activation> {
    const checked = checkManifest(project.tenantId, project.id, input, agents);
    const workflows: Record<string, string> = {};
    for (const [name, version] of Object.entries(input.workflowVersionManifest ?? {})) workflows[name] = String(version);
    return this.#activateNew(project, {
      environment: input.environment, label: input.label ?? null, description: input.description ?? null,
      ...checked, settingsVersionId: input.settingsVersionId ?? null, workflowVersionManifest: workflows, promotedFromId: null,
    }, createdBy);
  }

  /**
   * Copies a deployment (manifest, entry agent, overrides, settings, workflows) into another
   * environment as a new active deployment with its own id and slug; the one active there is
   * retired. The source is untouched. The agents are checked again, as on create.
   */
  async promote(project: Project, id: string, target: { targetEnvironment: Environment; label?: string | undefined }, createdBy: string, agents: AgentStore): Promise<Activation> {
    const source = this.require(project.tenantId, project.id, id);
    if (source.environment === target.targetEnvironment) {
      throw new ParleyError('VALIDATION_ERROR', `The deployment is already in ${source.environment}: targetEnvironment must be another environment`, { field: 'targetEnvironment' });
    }
    const checked = checkManifest(project.tenantId, project.id, source, agents);
    return this.#activateNew(project, {
      environment: target.targetEnvironment, label: target.label ?? source.label, description: source.description, ...checked,
      settingsVersionId: source.settingsVersionId, workflowVersionManifest: { ...source.workflowVersionManifest }, promotedFromId: source.id,
    }, createdBy);
  }

  /** Retires an active deployment: retiredAt set; sessions on it drain (session-admission.ts). 409 when already retired. */
  async retire(tenantId: string, projectId: string, id: string): Promise<Deployment> {
    return this.#store.transaction(() => {
      const d = this.require(tenantId, projectId, id);
      if (d.status === 'retired') throw new ParleyError('CONFLICT', `Deployment ${id} is already retired (since ${d.retiredAt})`, { status: d.status });
      const retired = this.#retireSync(d, new Date().toISOString());
      return retired;
    });
  }

  /**
   * Makes a retired deployment active again (retiredAt cleared); the deployment active in its
   * environment meanwhile, if any, is retired. 409 when the deployment is not retired.
   */
  async rollback(tenantId: string, projectId: string, id: string): Promise<Activation> {
    return this.#store.transaction(() => {
      const d = this.require(tenantId, projectId, id);
      if (d.status !== 'retired') throw new ParleyError('CONFLICT', `Deployment ${id} is active: only a retired deployment can be rolled back`, { status: d.status });
      const retired = this.#retireActiveSync(tenantId, projectId, d.environment, new Date().toISOString());
      const restored: Deployment = { ...d, status: 'active', retiredAt: null };
      this.#deployments.putSync([tenantId, projectId, id], restored);
      this.#active.putSync([tenantId, projectId, d.environment], id);
      return { deployment: restored, retired };
    });
  }

  /** The deployment in that project, or undefined (also for another tenant's). */
  get(tenantId: string, projectId: string, id: string): Deployment | undefined {
    return this.#deployments.get([tenantId, projectId, id]);
  }

  /** The deployment in that project or NOT_FOUND (the same for missing and foreign ids). */
  require(tenantId: string, projectId: string, id: string): Deployment {
    const d = this.get(tenantId, projectId, id);
    if (!d) throw new ParleyError('NOT_FOUND', 'Deployment not found');
    return d;
  }

  /** The tenant's deployment by id alone, or undefined. */
  byId(tenantId: string, id: string): Deployment | undefined {
    const projectId = this.#byId.get([tenantId, id]);
    return projectId === undefined ? undefined : this.get(tenantId, projectId, id);
  }

  /** The tenant's deployment by endpointSlug, or undefined (another tenant's slug is undefined too). */
  bySlug(tenantId: string, slug: string): Deployment | undefined {
    const owner = this.#bySlug.get([slug]);
    return owner && owner.tenantId === tenantId ? this.get(tenantId, owner.projectId, owner.id) : undefined;
  }

  /** A page of a project's deployments, newest first, optionally of one environment. */
  list(tenantId: string, projectId: string, options: { environment?: Environment | undefined; limit: number; offset: number }): { deployments: Deployment[]; total: number } {
    if (options.environment === undefined) {
      const deployments = this.#deployments.range({ prefix: [tenantId, projectId], reverse: true, limit: options.limit, offset: options.offset }).map((e) => e.value);
      return { deployments, total: this.#deployments.count([tenantId, projectId]) };
    }
    // Few deployments per project: filtering the whole range is cheaper than another index.
    const all = this.#deployments.range({ prefix: [tenantId, projectId], reverse: true }).map((e) => e.value).filter((d) => d.environment === options.environment);
    return { deployments: all.slice(options.offset, options.offset + options.limit), total: all.length };
  }

  /** The active deployment of an environment, or undefined. */
  active(tenantId: string, projectId: string, environment: Environment): Deployment | undefined {
    const id = this.#active.get([tenantId, projectId, environment]);
    return id === undefined ? undefined : this.get(tenantId, projectId, id);
  }

  /**
   * Per agent, environment -> version string of the active deployments of a project, 'auto'
   * shown as the latest compiled version now (what a session starting now would run).
   */
  activeVersions(tenantId: string, projectId: string, agents: AgentStore): Map<string, Record<string, string>> {
    const byAgent = new Map<string, Record<string, string>>();
    for (const { value: id, key } of this.#active.range({ prefix: [tenantId, projectId] })) {
      const d = this.get(tenantId, projectId, id);
      if (!d) continue;
      const environment = String(key[2]);
      for (const [name, version] of Object.entries(d.agentVersionManifest)) {
        const shown = version === AUTO_VERSION ? String(agents.get(tenantId, projectId, name)?.versionCount ?? 0) : version;
        let entry = byAgent.get(name);
        if (!entry) byAgent.set(name, (entry = {}));
        entry[environment] = shown;
      }
    }
    return byAgent;
  }

  async #activateNew(project: Project, fields: Omit<Deployment, 'id' | 'tenantId' | 'projectId' | 'status' | 'endpointSlug' | 'createdAt' | 'createdBy' | 'retiredAt'>, createdBy: string): Promise<Activation> {
    const { tenantId, id: projectId } = project;
    const now = new Date().toISOString();
    return this.#store.transaction(() => {
      let endpointSlug = newSlug(project.slug, fields.environment);
      // 36^8 suffixes make a collision unlikely; checking inside the transaction makes it impossible.
      while (this.#bySlug.get([endpointSlug])) endpointSlug = newSlug(project.slug, fields.environment);
      const deployment: Deployment = { id: cuid(), tenantId, projectId, status: 'active', endpointSlug, ...fields, createdAt: now, createdBy, retiredAt: null };
      const retired = this.#retireActiveSync(tenantId, projectId, fields.environment, now);
      this.#deployments.putSync([tenantId, projectId, deployment.id], deployment);
      this.#byId.putSync([tenantId, deployment.id], projectId);
      this.#bySlug.putSync([endpointSlug], { tenantId, projectId, id: deployment.id });
      this.#active.putSync([tenantId, projectId, fields.environment], deployment.id);
      return { deployment, retired };
    });
  }

  /** Inside a transaction: retires whatever is active in the environment. */
  #retireActiveSync(tenantId: string, projectId: string, environment: Environment, now: string): Deployment | undefined {
    const current = this.active(tenantId, projectId, environment);
    return current && current.status === 'active' ? this.#retireSync(current, now) : undefined;
  }

  #retireSync(d: Deployment, now: string): Deployment {
    const retired: Deployment = { ...d, status: 'retired', retiredAt: now };
    this.#deployments.putSync([d.tenantId, d.projectId, d.id], retired);
    if (this.#active.get([d.tenantId, d.projectId, d.environment]) === d.id) this.#active.removeSync([d.tenantId, d.projectId, d.environment]);
    return retired;
  }
}

/** `<project slug>-<environment>-<8 random base36>`, e.g. `support-production-k3j9x2ab`. */
function newSlug(projectSlug: string, environment: Environment): string {
  const bytes = randomBytes(8);
  let suffix = '';
  for (const b of bytes) suffix += SLUG_ALPHABET[b % 36];
  return `${projectSlug.slice(0, 48)}-${environment}-${suffix}`;
}
