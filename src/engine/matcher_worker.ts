// The matcher thread: owns the engine and all its state; talks to the front only via the rings.
// Start: genesis, then replay of the journal (recovery), then live batches. Every live batch is
// journaled; its commit marker goes out when the journal write is durable.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { Journal } from '../journal/journal.js';
import { attachRecordRing } from '../ring/records.js';
import type { EngineConfig } from './api.js';
import { FastEngine } from './engine.js';
import { Matcher } from './matcher.js';

export interface MatcherWorkerData {
  engine_config: EngineConfig;
  request_sab: SharedArrayBuffer;
  event_sab: SharedArrayBuffer;
  batch_requests_max: number;
  /** LMDB journal directory; null runs without durability (tests of the pipeline only). */
  journal_dir: string | null;
}

/** Batches applied but not yet durable; past this the matcher waits for the disk. */
const PENDING_COMMITS_MAX = 64;
/** Batches applied back to back before letting journal callbacks run. */
const BATCHES_PER_YIELD = 8;

/**
 * Testing aid: shifts the sequencer's clock (batch times) by this many ms. The tests of the
 * 90-day referral window and the 24-hour inclusion deadline restart the server with it set.
 */
const CLOCK_OFFSET_MS = Number(process.env.RINGBOOK_CLOCK_OFFSET_MS ?? 0);
if (!Number.isSafeInteger(CLOCK_OFFSET_MS)) throw new Error('RINGBOOK_CLOCK_OFFSET_MS must be an integer number of milliseconds');

const data = workerData as MatcherWorkerData;
const requests = attachRecordRing(data.request_sab);
const events = attachRecordRing(data.event_sab);
const engine = new FastEngine(data.engine_config);
const journal = data.journal_dir === null ? null : Journal.open(data.journal_dir);

function fatal(e: unknown): never {
  // Acknowledging without durability would break the promise every answer makes: stop.
  console.error('ringbook: journal commit failed, stopping:', e);
  process.exit(70);
}

const matcher = new Matcher(engine, requests, events, {
  batch_requests_max: data.batch_requests_max,
  accounts_max: data.engine_config.limits.accounts_max,
  now_ms: () => Date.now() + CLOCK_OFFSET_MS,
  commit: journal === null ? undefined : (id, time, records, count) => journal.append(id, time, records, count),
  onCommitFailure: fatal,
});

async function run(): Promise<void> {
  // Atomics.waitAsync holds no libuv handle: without a timer the thread would exit when idle.
  const keep_alive = setInterval(() => undefined, 1 << 30);
  matcher.genesis();
  let replayed = 0;
  if (journal !== null) {
    for (const b of journal.read(1)) {
      matcher.replay(b.batch_id, b.time_ms, b.records, b.count);
      replayed++;
    }
  }
  parentPort?.postMessage({ type: 'ready', replayed_batches: replayed, batch_id: matcher.batch_id });
  let since_yield = 0;
  for (;;) {
    if (matcher.pending_commits >= PENDING_COMMITS_MAX) {
      await yieldToEventLoop();
      continue;
    }
    if (requests.available() > 0) {
      matcher.runBatch();
      if (++since_yield >= BATCHES_PER_YIELD) {
        since_yield = 0;
        await yieldToEventLoop();
      }
      continue;
    }
    since_yield = 0;
    if (requests.isClosed()) {
      if (matcher.pending_commits === 0) break;
      await yieldToEventLoop();
      continue;
    }
    // Idle: a forced inclusion that is due gets its own batch; otherwise sleep on the ring
    // (without blocking the event loop: journal callbacks still run) until the next one is due.
    if (matcher.runDueBatch()) continue;
    await requests.waitForDataAsync(matcher.pending_commits > 0 ? 1 : matcher.idleMs(100));
  }
  if (journal !== null) await journal.close();
  clearInterval(keep_alive);
  events.close();
  parentPort?.postMessage({ type: 'stopped', batch_id: matcher.batch_id, requests_applied: matcher.requests_applied });
}

run().catch(fatal);
