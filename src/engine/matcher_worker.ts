// The matcher thread: owns the engine and all its state; talks to the front only via the rings.
import { parentPort, workerData } from 'node:worker_threads';
import { attachRecordRing } from '../ring/records.js';
import type { EngineConfig } from './api.js';
import { FastEngine } from './engine.js';
import { Matcher } from './matcher.js';

export interface MatcherWorkerData {
  engine_config: EngineConfig;
  request_sab: SharedArrayBuffer;
  event_sab: SharedArrayBuffer;
  batch_requests_max: number;
}

const data = workerData as MatcherWorkerData;
const requests = attachRecordRing(data.request_sab);
const events = attachRecordRing(data.event_sab);
const engine = new FastEngine(data.engine_config);
const matcher = new Matcher(engine, requests, events, {
  batch_requests_max: data.batch_requests_max,
  accounts_max: data.engine_config.limits.accounts_max,
  now_ms: () => Date.now(),
});
matcher.genesis();
parentPort?.postMessage({ type: 'ready' });

// Drain until the front closes the request ring and everything in it has been applied.
for (;;) {
  const n = requests.waitForData(200);
  if (n > 0) {
    matcher.runBatch();
    continue;
  }
  if (requests.isClosed() && requests.available() === 0) break;
}
events.close();
parentPort?.postMessage({ type: 'stopped', batch_id: matcher.batch_id, requests_applied: matcher.requests_applied });
