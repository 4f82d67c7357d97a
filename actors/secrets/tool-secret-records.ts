import type { SealedSecret } from '../../runtime/index.js';

/** Environments a secret belongs to (the deployment environments of the spec). */
export const SECRET_ENVIRONMENTS = ['dev', 'staging', 'production'] as const;
/** One environment. */
export type SecretEnvironment = (typeof SECRET_ENVIRONMENTS)[number];

/** Spec limits: value 16,384 characters; toolName and secretKey 256 each. */
export const TOOL_SECRET_LIMITS = { value: 16_384, toolName: 256, secretKey: 256 } as const;

/** A tool secret as stored: metadata plus the sealed value (never the plaintext). */
export interface ToolSecretRecord {
  id: string;
  tenantId: string;
  projectId: string;
  toolName: string;
  secretKey: string;
  environment: SecretEnvironment;
  /** 1 on creation, +1 on every rotation. */
  version: number;
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  createdBy: string | null;
  /** AES-256-GCM ciphertext of the value and the id of the key that sealed it. */
  sealed: SealedSecret;
}

/** The API (and export) form of a secret: metadata only, never the value nor its ciphertext. */
export type ToolSecretView = Pick<ToolSecretRecord, 'id' | 'projectId' | 'toolName' | 'secretKey' | 'environment' | 'version' | 'expiresAt' | 'createdAt' | 'updatedAt'>;

/** Shapes a stored secret for the API; the only form a secret may leave the store in. */
export function toolSecretView(r: ToolSecretRecord): ToolSecretView {
  return {
    id: r.id, projectId: r.projectId, toolName: r.toolName, secretKey: r.secretKey, environment: r.environment,
    version: r.version, expiresAt: r.expiresAt, createdAt: r.createdAt, updatedAt: r.updatedAt,
  };
}
