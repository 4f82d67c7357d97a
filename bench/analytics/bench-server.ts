import { createLogger, loadConfig } from '../../runtime/index.js';
import { startParley } from '../../gateway/server.js';
import { EventRecorder, ThreadedEventWriter } from '../../actors/index.js';
import { syntheticEvent } from './synthetic-events.js';

// Parley under test for bench/analytics, with an event generator on its gateway thread (the
// busiest one) writing through a ThreadedEventWriter, that the bench switches on and off over IPC: {record: eventsPerSecond} starts
// it, {record: 0} stops it and answers with the recorder's counters.
const log = createLogger('error');
const config = { ...loadConfig(), port: 0, host: '127.0.0.1' };
const parley = await startParley(config, log);
const writer = new ThreadedEventWriter({ path: config.dataDir, durability: config.durability, retentionDays: config.analyticsRetentionDays });
let recorder: EventRecorder | undefined;
let timer: NodeJS.Timeout | undefined;
let n = 0;

process.on('message', (msg: { record: number; tenantId: string; projectId: string }) => {
  void (async () => {
    if (msg.record > 0) {
      recorder = new EventRecorder(writer);
      const started = performance.now();
      let sent = 0;
      // Every 5 ms, catch up with the target rate (timers drift under load; the rate must not).
      timer = setInterval(() => {
        const due = Math.floor(((performance.now() - started) / 1000) * msg.record);
        for (; sent < due; sent++, n++) recorder!.record(syntheticEvent(msg.tenantId, msg.projectId, n, Date.now()));
      }, 5);
      process.send!({ started: true });
    } else {
      clearInterval(timer);
      const r = recorder!;
      await r.close();
      process.send!({ stats: r.stats() });
    }
  })();
});
process.stdout.write(JSON.stringify({ port: parley.port }) + '\n');
process.on('SIGTERM', () => void parley.close().then(() => process.exit(0)));
