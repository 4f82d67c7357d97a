import { cuid, ParleyError, randomToken, sha256Hex, hashPassword, type Collection, type Store } from '../../runtime/index.js';
import type { ApiKey, Project, Tenant, TenantLimits, User } from './records.js';
import { ROLE_PERMISSIONS, type Permission, type Role } from './permissions.js';

/** Prefix of every Parley API key. */
export const API_KEY_PREFIX = 'prl_';

/** Result of creating an API key: the record and the key, which is never stored or shown again. */
export interface CreatedApiKey {
  record: ApiKey;
  key: string;
}

/**
 * Tenants, projects, users and API keys in LMDB. Keys are tenant-first so that a lookup can only
 * ever find the caller's own records; two global indexes (email, key hash) exist for login and
 * authentication and point back into the tenant's range.
 */
export class TenancyStore {
  readonly #store: Store;
  readonly #tenants: Collection<Tenant>;
  readonly #projects: Collection<Project>;
  readonly #users: Collection<User>;
  readonly #usersByEmail: Collection<{ tenantId: string; userId: string }>;
  readonly #apiKeys: Collection<ApiKey>;
  readonly #apiKeysByHash: Collection<{ tenantId: string; keyId: string }>;
  #revocations = 0;
  #limitsVersion = 0;

  constructor(store: Store) {
    this.#store = store;
    this.#tenants = store.collection('tenants');
    this.#projects = store.collection('projects');
    this.#users = store.collection('users');
    this.#usersByEmail = store.collection('usersByEmail');
    this.#apiKeys = store.collection('apiKeys');
    this.#apiKeysByHash = store.collection('apiKeysByHash');
  }

  /** True when no tenant exists yet (first start). */
  isEmpty(): boolean {
    return this.#tenants.count([]) === 0;
  }

  /** Creates a tenant with a default project and an admin API key, atomically. */
  async createTenant(name: string, options: { apiKey?: string } = {}): Promise<{ tenant: Tenant; project: Project; apiKey: CreatedApiKey }> {
    const now = new Date().toISOString();
    const tenant: Tenant = { id: cuid(), name, createdAt: now };
    const project = this.#newProject(tenant.id, 'Default project', 'default', now);
    const apiKey = this.#newApiKey(tenant.id, 'bootstrap admin key', 'admin', undefined, null, options.apiKey);
    if (this.#apiKeysByHash.get([apiKey.record.hash])) throw new ParleyError('CONFLICT', 'That API key is already in use');
    await this.#store.transaction(() => {
      this.#tenants.putSync([tenant.id], tenant);
      this.#projects.putSync([tenant.id, project.id], project);
      this.#putApiKeySync(apiKey.record);
    });
    return { tenant, project, apiKey };
  }

  /** The tenant, or undefined. */
  tenant(tenantId: string): Tenant | undefined {
    return this.#tenants.get([tenantId]);
  }

  /** Replaces the tenant's rate-limit overrides ({} clears them); undefined when there is no such tenant. */
  async setTenantLimits(tenantId: string, limits: TenantLimits): Promise<Tenant | undefined> {
    const updated = await this.#store.transaction(() => {
      const tenant = this.#tenants.get([tenantId]);
      if (!tenant) return undefined;
      const next: Tenant = { ...tenant, limits };
      this.#tenants.putSync([tenantId], next);
      return next;
    });
    if (updated) this.#limitsVersion++;
    return updated;
  }

  /** Counts limit changes made through this store: rate limiters compare it to reload overrides at once. */
  get limitsVersion(): number {
    return this.#limitsVersion;
  }

  /** Creates a project; slugs are unique per tenant. */
  async createProject(tenantId: string, name: string, slug: string | undefined): Promise<Project> {
    const now = new Date().toISOString();
    const finalSlug = slug ?? slugify(name);
    if (this.listProjects(tenantId).some((p) => p.slug === finalSlug)) {
      throw new ParleyError('CONFLICT', `A project with slug "${finalSlug}" already exists`, { field: 'slug' });
    }
    const project = this.#newProject(tenantId, name, finalSlug, now);
    await this.#projects.put([tenantId, project.id], project);
    return project;
  }

  /** The tenant's project, or undefined (also for another tenant's project). */
  project(tenantId: string, projectId: string): Project | undefined {
    // Ids come from query strings too; one longer than any id would not even fit an LMDB key.
    if (projectId.length > 128) return undefined;
    return this.#projects.get([tenantId, projectId]);
  }

  /** The tenant's project or a NOT_FOUND error that reads the same for missing and foreign ids. */
  requireProject(tenantId: string, projectId: string): Project {
    const project = this.project(tenantId, projectId);
    if (!project) throw new ParleyError('NOT_FOUND', 'Project not found');
    return project;
  }

  /** All projects of a tenant, oldest first. */
  listProjects(tenantId: string): Project[] {
    return this.#projects.range({ prefix: [tenantId] }).map((e) => e.value).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  /** Saves a changed project. */
  async saveProject(project: Project): Promise<void> {
    await this.#projects.put([project.tenantId, project.id], project);
  }

  /** Creates a user; emails are unique across the service because login names no tenant. */
  async createUser(tenantId: string, email: string, password: string, role: Role): Promise<User> {
    const normalized = email.trim().toLowerCase();
    if (this.#usersByEmail.get([normalized])) throw new ParleyError('CONFLICT', 'A user with that email already exists', { field: 'email' });
    const user: User = { id: cuid(), tenantId, email: normalized, passwordHash: await hashPassword(password), role, createdAt: new Date().toISOString() };
    await this.#store.transaction(() => {
      if (this.#usersByEmail.get([normalized])) throw new ParleyError('CONFLICT', 'A user with that email already exists', { field: 'email' });
      this.#users.putSync([tenantId, user.id], user);
      this.#usersByEmail.putSync([normalized], { tenantId, userId: user.id });
    });
    return user;
  }

  /** The user with that email, or undefined. */
  userByEmail(email: string): User | undefined {
    const ref = this.#usersByEmail.get([email.trim().toLowerCase()]);
    return ref ? this.#users.get([ref.tenantId, ref.userId]) : undefined;
  }

  /** The tenant's user, or undefined. */
  user(tenantId: string, userId: string): User | undefined {
    return this.#users.get([tenantId, userId]);
  }

  /** All users of a tenant. */
  listUsers(tenantId: string): User[] {
    return this.#users.range({ prefix: [tenantId] }).map((e) => e.value);
  }

  /** Creates an API key with a role, optionally narrowed to a subset of that role's permissions. */
  async createApiKey(tenantId: string, name: string, role: Role, permissions: Permission[] | undefined, createdBy: string | null): Promise<CreatedApiKey> {
    const created = this.#newApiKey(tenantId, name, role, permissions, createdBy);
    await this.#store.transaction(() => this.#putApiKeySync(created.record));
    return created;
  }

  /** The API key record for a presented key, or undefined. Looks up by hash: no secret is compared byte by byte. */
  apiKeyBySecret(key: string): ApiKey | undefined {
    if (!key.startsWith(API_KEY_PREFIX) || key.length > 256) return undefined;
    const hash = sha256Hex(key);
    const ref = this.#apiKeysByHash.get([hash]);
    if (!ref) return undefined;
    const record = this.#apiKeys.get([ref.tenantId, ref.keyId]);
    return record && record.hash === hash ? record : undefined;
  }

  /** The tenant's API keys (records only, never the keys). */
  listApiKeys(tenantId: string): ApiKey[] {
    return this.#apiKeys.range({ prefix: [tenantId] }).map((e) => e.value);
  }

  /**
   * Counts API key deletions made through this store. Caches of authenticated keys compare it to
   * drop their entries at once when a key is deleted (single node; a cluster will publish it).
   */
  get revocations(): number {
    return this.#revocations;
  }

  /** Deletes the tenant's API key; false when there is none with that id. */
  async deleteApiKey(tenantId: string, keyId: string): Promise<boolean> {
    return this.#store.transaction(() => {
      const record = this.#apiKeys.get([tenantId, keyId]);
      if (!record) return false;
      this.#apiKeys.removeSync([tenantId, keyId]);
      this.#apiKeysByHash.removeSync([record.hash]);
      this.#revocations++;
      return true;
    });
  }

  #newProject(tenantId: string, name: string, slug: string, now: string): Project {
    return { id: cuid(), tenantId, name, slug, defaultAgent: null, createdAt: now, updatedAt: now };
  }

  #newApiKey(tenantId: string, name: string, role: Role, permissions: Permission[] | undefined, createdBy: string | null, given?: string): CreatedApiKey {
    const key = given ?? `${API_KEY_PREFIX}${randomToken(32)}`;
    const allowed = ROLE_PERMISSIONS[role];
    const effective = permissions ? allowed.filter((p) => permissions.includes(p)) : [...allowed];
    const record: ApiKey = {
      id: cuid(), tenantId, name, prefix: key.slice(0, 10), hash: sha256Hex(key), role,
      permissions: effective, createdAt: new Date().toISOString(), createdBy,
    };
    return { record, key };
  }

  #putApiKeySync(record: ApiKey): void {
    this.#apiKeys.putSync([record.tenantId, record.id], record);
    this.#apiKeysByHash.putSync([record.hash], { tenantId: record.tenantId, keyId: record.id });
  }
}

/** A url-safe slug from a display name. */
export function slugify(name: string): string {
  const slug = name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64);
  return slug || 'project';
}
