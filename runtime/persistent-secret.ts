import type { Store } from './store/store.js';
import { randomToken } from './crypto.js';

/**
 * A secret from configuration, or else one generated on first start and kept in the store's
 * `system` collection, so that tokens issued before a restart stay valid after it.
 */
export async function persistentSecret(store: Store, name: string, configured: string | undefined): Promise<string> {
  if (configured !== undefined) return configured;
  const system = store.collection<string>('system');
  const existing = system.get(['secret', name]);
  if (existing !== undefined) return existing;
  const generated = randomToken(48);
  await system.put(['secret', name], generated);
  return generated;
}
