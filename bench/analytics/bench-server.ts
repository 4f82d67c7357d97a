import { createLogger, loadConfig } from '../../runtime/index.js';
import { startParley } from '../../gateway/server.js';
import { Packr } from 'msgpackr';
import { EventRecorder, ThreadedEventWriter, analyticsPath, type EventWriter } from '../../actors/index.js';
import { syntheticEvent } from './synthetic-events.js';

// Parley under test for bench/analytics, with an event generator on its gateway thread (the
// busiest one) writing through a ThreadedEventWriter, that the bench drives over IPC:
// {record: eventsPerSecond} starts it, {stats: true} answers with the recorder's counters and the
// process's CPU time now,
// {record: 0} stops it, drains the recorder and answers with its final counters.
const log = createLogger('error');
const config = { ...loadConfig(), port: 0, host: '127.0.0.1' };
const parley = await startParley(config, log);
const threaded = new ThreadedEventWriter({ path: analyticsPath(config.dataDir), durability: config.durability, retentionDays: config.analyticsRetentionDays });
// PARLEY_BENCH_WRITER=discard: a diagnostic that splits the cost of recording. Events are packed
// exactly as the ThreadedEventWriter packs them and then thrown away, so a run shows what the
// producer's side alone (on the gateway thread) costs chat.
const packr = new Packr({ useRecords: true });
const writer: EventWriter = process.env['PARLEY_BENCH_WRITER'] === 'discard' ? { writeNew: async (events) => void packr.pack(events) } : threaded;
let recorder: EventRecorder | undefined;
let timer: NodeJS.Timeout | undefined;
let n = 0;

process.on('message', (msg: { record: number; tenantId: string; projectId: string } | { stats: true }) => {
  void (async () => {
    // cpu: this process's CPU time so far (all threads), so the bench can tell what recording costs.
    if ('stats' in msg) process.send!({ stats: recorder?.stats(), cpu: process.cpuUsage(), gatewayElu: performance.eventLoopUtilization() });
    else if (msg.record > 0) {
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
