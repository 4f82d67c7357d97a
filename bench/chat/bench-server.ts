import uWS from 'uWebSockets.js';
import { createLogger, loadConfig } from '../../runtime/index.js';
import { createParley, startParley } from '../../gateway/server.js';
import { listenNodeHttp } from '../../gateway/node-http-server.js';

// A server under test, in its own process so the load generator does not share its event loop.
// Modes: uws-constant (the ceiling), parley-node-http (single thread), parley (uWS + workers).
const mode = process.argv[2];
const log = createLogger('error');

if (mode === 'uws-constant') {
  const body = JSON.stringify({ success: true, sessionId: 'c0000000000000000000000000', response: 'Hello from greeter!', traceEvents: [] });
  uWS.App()
    .post('/*', (res) => {
      res.onAborted(() => undefined);
      res.onData((_chunk, isLast) => {
        if (isLast) res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(body));
      });
    })
    .listen('127.0.0.1', 0, (socket) => {
      if (!socket) throw new Error('listen failed');
      process.stdout.write(JSON.stringify({ port: uWS.us_socket_local_port(socket) }) + '\n');
    });
} else if (mode === 'parley-node-http') {
  const config = { ...loadConfig(), workers: 0 };
  const parley = await createParley(config, log);
  const server = await listenNodeHttp(parley.app, { host: '127.0.0.1', port: 0 });
  process.stdout.write(JSON.stringify({ port: server.port }) + '\n');
} else if (mode === 'parley') {
  const config = { ...loadConfig(), port: 0, host: '127.0.0.1' };
  const parley = await startParley(config, log);
  process.stdout.write(JSON.stringify({ port: parley.port }) + '\n');
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}

// Exit normally on SIGTERM so that --cpu-prof and friends can write their files.
process.on('SIGTERM', () => process.exit(0));
