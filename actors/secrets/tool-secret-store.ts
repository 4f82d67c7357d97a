import { cuid, ParleyError, sha256Hex, type Collection, type SecretBox, type Store } from '../../runtime/index.js';
import { toolSecretView, type SecretEnvironment, type ToolSecretRecord, type ToolSecretView } from './tool-secret-records.js';

/** What creating a secret takes (already validated). */
export interface NewToolSecret {
  toolName: string;
  secretKey: string;
  value: string;
  environment: SecretEnvironment;
  expiresAt: string | null;
  createdBy: string | null;
}

/** Filters and page of a secret list. */
export interface ToolSecretListQuery {
  toolName?: string;
  environment?: SecretEnvironment;
  page: number;
  limit: number;
}

/** Outcome of re-sealing every secret with the active master key. */
export interface ResealReport {
  /** Secrets re-encrypted with the active key. */
  resealed: number;
  /** Secrets already sealed with the active key. */
  unchanged: number;
  /** Ids of secrets that could not be opened (their key is gone or the data is damaged). */
  failed: string[];
}

const notFound = (): ParleyError => new ParleyError('NOT_FOUND', 'Tool secret not found');
const RESEAL_BATCH = 100;

/** Binds a ciphertext to its record: copied onto another secret or tenant, it no longer opens. */
function aadOf(tenantId: string, secretId: string): string {
  return `tool-secret:${tenantId}:${secretId}`;
}

/**
 * Encrypted tool secrets. Records are keyed [tenantId, projectId, id] (a project's secrets are one
 * range, oldest first); [tenantId, id] -> projectId serves the by-id routes; a name index
 * [tenantId, projectId, environment, sha256(toolName), sha256(secretKey)] -> id keeps names
 * unique and makes `resolve` two reads (names are hashed because 256 characters each could
 * exceed LMDB's key size). The plaintext exists only in memory, only while sealing or opening.
 */
export class ToolSecretStore {
  readonly #store: Store;
  readonly #box: SecretBox;
  readonly #secrets: Collection<ToolSecretRecord>;
  readonly #owners: Collection<string>;
  readonly #names: Collection<string>;

  constructor(store: Store, box: SecretBox) {
    this.#store = store;
    this.#box = box;
    this.#secrets = store.collection('toolSecrets');
    this.#owners = store.collection('toolSecretOwners');
    this.#names = store.collection('toolSecretNames');
  }

  /** Seals and stores a secret at version 1; SERVICE_UNAVAILABLE without keys, CONFLICT on a taken name. */
  async create(tenantId: string, projectId: string, input: NewToolSecret): Promise<ToolSecretView> {
    const id = cuid();
    const sealed = this.#box.seal(input.value, aadOf(tenantId, id));
    const now = new Date().toISOString();
    const record: ToolSecretRecord = {
      id, tenantId, projectId, toolName: input.toolName, secretKey: input.secretKey, environment: input.environment,
      version: 1, expiresAt: input.expiresAt, createdAt: now, updatedAt: now, createdBy: input.createdBy, sealed,
    };
    const nameKey = this.#nameKey(record);
    await this.#store.transaction(() => {
      if (this.#names.get(nameKey) !== undefined) {
        throw new ParleyError('CONFLICT', `A secret ${input.secretKey} for tool ${input.toolName} already exists in ${input.environment}`, { field: 'secretKey' });
      }
      this.#names.putSync(nameKey, id);
      this.#owners.putSync([tenantId, id], projectId);
      this.#secrets.putSync([tenantId, projectId, id], record);
    });
    return toolSecretView(record);
  }

  /** A secret's stored record (metadata and ciphertext), or undefined when missing or foreign. */
  record(tenantId: string, secretId: string): ToolSecretRecord | undefined {
    const projectId = this.#owners.get([tenantId, secretId]);
    return projectId === undefined ? undefined : this.#secrets.get([tenantId, projectId, secretId]);
  }

  /** A page of a project's secrets (metadata only), oldest first. */
  list(tenantId: string, projectId: string, query: ToolSecretListQuery): { secrets: ToolSecretView[]; total: number } {
    const offset = (query.page - 1) * query.limit;
    if (query.toolName === undefined && query.environment === undefined) {
      const page = this.#secrets.range({ prefix: [tenantId, projectId], offset, limit: query.limit });
      return { secrets: page.map((e) => toolSecretView(e.value)), total: this.#secrets.count([tenantId, projectId]) };
    }
    const matching = this.#secrets
      .range({ prefix: [tenantId, projectId] })
      .map((e) => e.value)
      .filter((s) => (query.toolName === undefined || s.toolName === query.toolName) && (query.environment === undefined || s.environment === query.environment));
    return { secrets: matching.slice(offset, offset + query.limit).map(toolSecretView), total: matching.length };
  }

  /**
   * Rotates: seals the new value with the active key, version + 1. `expiresAt` undefined keeps
   * the current expiry, null removes it.
   */
  async rotate(tenantId: string, secretId: string, change: { value: string; expiresAt?: string | null }): Promise<ToolSecretView> {
    const sealed = this.#box.seal(change.value, aadOf(tenantId, secretId));
    return this.#store.transaction(() => {
      const current = this.record(tenantId, secretId);
      if (!current) throw notFound();
      const next: ToolSecretRecord = {
        ...current, sealed, version: current.version + 1, updatedAt: new Date().toISOString(),
        expiresAt: change.expiresAt === undefined ? current.expiresAt : change.expiresAt,
      };
      this.#secrets.putSync([tenantId, current.projectId, secretId], next);
      return toolSecretView(next);
    });
  }

  /** Deletes a secret for good (ciphertext and indexes); NOT_FOUND when missing or foreign. */
  async remove(tenantId: string, secretId: string): Promise<void> {
    await this.#store.transaction(() => {
      const current = this.record(tenantId, secretId);
      if (!current) throw notFound();
      this.#names.removeSync(this.#nameKey(current));
      this.#owners.removeSync([tenantId, secretId]);
      this.#secrets.removeSync([tenantId, current.projectId, secretId]);
    });
  }

  /**
   * The plaintext a tool of the session's environment may use; undefined when there is no such
   * secret or it has expired. Throws SERVICE_UNAVAILABLE when its key is no longer configured
   * and INTERNAL_ERROR when the ciphertext was tampered with. Never logs the value.
   */
  resolve(tenantId: string, projectId: string, environment: string, toolName: string, secretKey: string): string | undefined {
    const id = this.#names.get([tenantId, projectId, environment, sha256Hex(toolName), sha256Hex(secretKey)]);
    const record = id === undefined ? undefined : this.#secrets.get([tenantId, projectId, id]);
    if (!record) return undefined;
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= Date.now()) return undefined;
    return this.#box.open(record.sealed, aadOf(tenantId, id!));
  }

  /**
   * Re-seals every secret of every tenant that was sealed with an older master key (the operator
   * step after putting a new key first in PARLEY_ENCRYPTION_KEYS). Versions do not change: the
   * value is the same. A secret rotated meanwhile is left as its rotation wrote it.
   */
  async resealAll(): Promise<ResealReport> {
    const report: ResealReport = { resealed: 0, unchanged: 0, failed: [] };
    if (!this.#box.configured) throw this.#unavailable();
    let pending: ToolSecretRecord[] = [];
    const flush = async (): Promise<void> => {
      const batch = pending;
      pending = [];
      report.resealed += await this.#store.transaction(() => {
        let written = 0;
        for (const next of batch) {
          const key = [next.tenantId, next.projectId, next.id];
          const current = this.#secrets.get(key);
          if (!current || current.version !== next.version) continue;
          this.#secrets.putSync(key, next);
          written++;
        }
        return written;
      });
    };
    for (const { value: record } of this.#secrets.range({ prefix: [] })) {
      if (!this.#box.needsReseal(record.sealed)) {
        report.unchanged++;
        continue;
      }
      const aad = aadOf(record.tenantId, record.id);
      let plaintext: string;
      try {
        plaintext = this.#box.open(record.sealed, aad);
      } catch {
        report.failed.push(record.id);
        continue;
      }
      pending.push({ ...record, sealed: this.#box.seal(plaintext, aad) });
      if (pending.length >= RESEAL_BATCH) await flush();
    }
    if (pending.length > 0) await flush();
    return report;
  }

  #unavailable(): ParleyError {
    return new ParleyError('SERVICE_UNAVAILABLE', 'Encryption is not configured: set PARLEY_ENCRYPTION_KEYS');
  }

  #nameKey(r: Pick<ToolSecretRecord, 'tenantId' | 'projectId' | 'environment' | 'toolName' | 'secretKey'>): [string, string, string, string, string] {
    return [r.tenantId, r.projectId, r.environment, sha256Hex(r.toolName), sha256Hex(r.secretKey)];
  }
}
