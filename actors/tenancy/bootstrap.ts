import type { Config } from '../../runtime/index.js';
import type { TenancyStore } from './tenancy-store.js';
import type { Project, Tenant } from './records.js';

/** What first start created; the key is in it only when it was generated (not configured). */
export interface BootstrapResult {
  tenant: Tenant;
  project: Project;
  apiKey: string;
  apiKeyConfigured: boolean;
}

/**
 * On first start (no tenant yet) creates the default tenant, its default project and an admin
 * API key: PARLEY_BOOTSTRAP_API_KEY when set, else a random one. Later starts do nothing.
 */
export async function bootstrapIfEmpty(tenancy: TenancyStore, config: Config): Promise<BootstrapResult | undefined> {
  if (!tenancy.isEmpty()) return undefined;
  const { tenant, project, apiKey } = await tenancy.createTenant('default', { apiKey: config.bootstrapApiKey });
  return { tenant, project, apiKey: apiKey.key, apiKeyConfigured: config.bootstrapApiKey !== undefined };
}
