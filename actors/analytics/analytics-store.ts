/**
 * Analytics live in their own LMDB environment, `<dataDir>/analytics`, beside the main one. LMDB
 * has one write lock per environment: recording commits large batches, and in a shared
 * environment every chat turn's commit would queue behind them. Apart, neither waits on the
 * other, and analytics can be moved, backed up or wiped on its own.
 */
import { join } from 'node:path';
import { LmdbStore } from '../../runtime/index.js';

/** What opening the analytics environment needs from the config. */
export interface AnalyticsStoreConfig {
  dataDir: string;
  durability: 'commit' | 'flush';
}

/** The folder of the analytics environment. */
export function analyticsPath(dataDir: string): string {
  return join(dataDir, 'analytics');
}

/** Opens the analytics environment (each thread opens its own handle; lmdb-js shares the environment). */
export function openAnalyticsStore(config: AnalyticsStoreConfig): LmdbStore {
  return new LmdbStore({ path: analyticsPath(config.dataDir), durability: config.durability });
}
