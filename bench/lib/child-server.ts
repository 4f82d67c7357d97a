import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** A server process under test. */
export interface ChildServer {
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * Starts `node <script> <args>` with a fresh data folder and waits for the `{"port":…}` line it
 * prints when listening. stop() kills it and removes the folder.
 */
export async function startChildServer(script: URL, args: string[], env: Record<string, string> = {}): Promise<ChildServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
  // PARLEY_BENCH_NODE_ARGS passes flags such as --cpu-prof to the server under test.
  const nodeArgs = (process.env['PARLEY_BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, script.pathname, ...args], {
    env: { ...process.env, PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { port?: number };
        if (typeof msg.port === 'number') resolve(msg.port);
      } catch {
        // not our line
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before listening`)));
  });
  return {
    port,
    dataDir,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
