import { ConfigError, createLogger, loadConfig } from '../runtime/index.js';
import { startParley } from './server.js';

// The command behind `npm start`: configuration errors are printed plainly and exit 2.
let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
const log = createLogger(config.logLevel, { service: 'parley' });
const parley = await startParley(config, log);

if (parley.bootstrap) {
  const b = parley.bootstrap;
  // Printed once, on the first start only, and never written to the JSON log.
  process.stdout.write(
    [
      '',
      '  Parley first start: created a default tenant, project and admin API key.',
      `    tenant id:  ${b.tenant.id}`,
      `    project id: ${b.project.id}`,
      b.apiKeyConfigured ? '    API key:    the one in PARLEY_BOOTSTRAP_API_KEY' : `    API key:    ${b.apiKey}   (shown once: keep it now)`,
      '',
    ].join('\n') + '\n',
  );
}
log.info('listening', { host: config.host, port: parley.port, workers: config.workers, dataDir: config.dataDir });

let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  log.info('stopping', { signal });
  parley.close().then(
    () => process.exit(0),
    (err: unknown) => {
      log.error('error while stopping', { err });
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
