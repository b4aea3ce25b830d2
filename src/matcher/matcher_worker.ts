// The matcher thread: owns the engine and all its state; talks to the front only via the rings.
// Start: genesis, or the engine state of a snapshot (chosen and checked by the front,
// src/snapshot/recovery.ts); then replay of the journal after it (recovery), then live batches.
// Every live batch is journaled; its commit marker goes out when the journal write is durable.
//
// The loop never returns to this thread's event loop while it runs (issue 11): it sleeps in
// Atomics.wait on the request ring (a producer's notify is one futex wake, where waking an
// Atomics.waitAsync posted a task to this event loop), commits each batch synchronously and
// publishes the marker at once. The front's messages (snapshot, trim) are read with
// receiveMessageOnPort before every sleep (the front nudges the ring after posting one, so a
// sleeping matcher sees it at once) and, while the ring never empties, every POLL_TURNS_MAX loop
// turns; not at every turn (h23m): at 1,000 requests/s that was three reads of an empty port per
// one-request batch.
//
// Per-batch fixed cost at light load (h23m, docs/benchmarks.md): the ring's busy-spin before a
// sleep (200 loads, ~4 us) runs only when the last sleep was short (the requests come fast enough
// for a spin to catch one); one clock read serves an idle turn's due check, store check and sleep.
//
// Snapshots: after every `snapshot_every_batches`-th live batch, and when the front asks, the
// matcher copies its state's columns between two batches into buffers kept from the last
// snapshot (src/matcher/engine_staging.ts: a few ms, where walking and packing them here took
// ~200 ms at 112k open orders, docs/benchmarks.md h29w) and posts them to the front, which joins
// them with its read model at the same batch; the snapshot writer thread walks, packs and writes.
// One due while the previous copy is still being read there (one write at a time) is copied into
// a second set of kept buffers (KEPT_SETS_MAX, h30s); one due while both are still read is
// deferred (EngineStaging.takeDue, h31f: the front is told, and drops the part it took for it) and
// taken at the first batch boundary after a set is free, as an on-demand one (the front captures
// at that batch). Before h31f the matcher then walked and packed the state itself (~185 ms).
import { performance } from 'node:perf_hooks';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { Journal, type JournalFault } from '../journal/journal.js';
import { attachRecordRing } from '../ring/records.js';
import { RING_WAIT_SPIN_ITERATIONS_DEFAULT } from '../ring/ring_layout.js';
import { decodeEngine } from './engine_snapshot.js';
import { EngineStaging, type StagedEngine } from './engine_staging.js';
import type { EngineConfig } from '../engine/api.js';
import { FastEngine, restoreFastEngine } from '../engine/engine.js';
import { Matcher } from './matcher.js';
import { pinCurrentThread, type PinResult } from './pin_thread.js';
import { componentLog, configureLogs, type LogSettings } from '../util/log.js';
import { nameThisThread, THREAD_NAMES } from '../util/thread_name.js';
import { answerMemoryQuestion } from '../util/thread_memory.js';

export interface MatcherWorkerData {
  engine_config: EngineConfig;
  request_sab: SharedArrayBuffer;
  event_sab: SharedArrayBuffer;
  batch_requests_max: number;
  /** LMDB journal directory; null runs without durability (tests of the pipeline only). */
  journal_dir: string | null;
  /** Test seam of the journal (JournalOptions.fault_file); null in production. */
  journal_fault_file: string | null;
  /** Resume from this snapshot (its engine part, already checked by the front) instead of genesis. */
  snapshot: { batch_id: number; engine: Uint8Array } | null;
  /** Capture a snapshot after every this many live batches (0: only on request). */
  snapshot_every_batches: number;
  /** Added to the sequencer's clock (RINGBOOK_CLOCK_OFFSET_MS, a testing aid; 0 live). */
  clock_offset_ms: number;
  /** Stamp batch start / applied / durable on BATCH_COMMITTED (config diagnostics.stage_timings). */
  stamp_batches: boolean;
  /** Pin this thread to one CPU (config matcher.cpu), null: leave it to the scheduler. */
  cpu: number | null;
  /** This thread's log settings (the front's: src/util/log.ts). */
  log: LogSettings;
}

/** Front -> matcher. */
export type ToMatcher =
  | { type: 'snapshot' } | { type: 'snapshot_captured' } | { type: 'trim'; through_batch_id: number }
  | { type: 'memory'; ask: number } | { type: 'batch' };

/** Matcher -> front. */
export type FromMatcher =
  | { type: 'ready'; replayed_batches: number; batch_id: number; snapshot_batch_id: number | null; replay_ms: number; pin: PinResult | null }
  /**
   * engine: the staged copy of the columns (the writer thread walks and packs it). on_demand: asked
   * for, or a deferred one taken off its schedule (the front captures its part at this batch; the
   * matcher waits for it). copy_ms: the copies; pause_us: [0] the matcher's whole pause in us, the
   * copies through this post, stored right after the post (0 until then).
   */
  | { type: 'snapshot'; batch_id: number; batch_time_ms: number; engine: StagedEngine; copy_ms: number; pause_us: Int32Array; on_demand: boolean }
  /** A snapshot due at batch_id found both kept sets still being read: deferred (takeDue). */
  | { type: 'snapshot_deferred'; batch_id: number; on_demand: boolean }
  | { type: 'trimmed'; through_batch_id: number; deleted: number }
  | { type: 'journal_fault'; fault: JournalFault | null }
  | { type: 'stopped'; batch_id: number; requests_applied: number };

/** The engine snapshot the matcher captured (src/snapshot/coordinator.ts writes it to a file). */
export type SnapshotMessage = Extract<FromMatcher, { type: 'snapshot' }>;
/** What the coordinator hears of the matcher's snapshots: one captured, or one deferred. */
export type SnapshotNews = SnapshotMessage | Extract<FromMatcher, { type: 'snapshot_deferred' }>;


const data = workerData as MatcherWorkerData;
configureLogs(data.log);
const log = componentLog('matcher');
nameThisThread(THREAD_NAMES.matcher);
const requests = attachRecordRing(data.request_sab);
const events = attachRecordRing(data.event_sab);
const restored = data.snapshot === null ? null : decodeEngine(data.snapshot.engine);
const engine = restored === null ? new FastEngine(data.engine_config) : restoreFastEngine(data.engine_config, restored.canonical);
const journal = data.journal_dir === null ? null : Journal.open(data.journal_dir, {
  // The front refuses new writes while a journal write is failing (docs/operations.md).
  onFault: (fault) => post({ type: 'journal_fault', fault }),
  fault_file: data.journal_fault_file,
});
let snapshot_requested = false;
/**
 * The front asked for a batch (MatcherLink.requestBatch): on an idle exchange an empty one is
 * started, as for a due forced inclusion; any batch that runs meanwhile answers it.
 */
let batch_requested = false;
/**
 * After an on-demand snapshot the next batch waits until the front has captured its part at the
 * same batch (snapshot_captured): without the wait, the front's read model could apply the next
 * batch before the snapshot message reached it, and the snapshot was missed (3 times in 200,000
 * fuzz requests even after 3 attempts, issue 20). Periodic snapshots need no wait: both sides
 * know their batch numbers in advance.
 */
let front_capture_deadline_ms = 0;
/** Longest wait for the front (a front that never answers must not stop the exchange). */
const FRONT_CAPTURE_WAIT_MS_MAX = 2_000;
/** Nobody notifies it: Atomics.wait on it is a sleep of this thread. */
const capture_pause = new Int32Array(new SharedArrayBuffer(4));
/** While the ring never empties (no sleep), the front's messages are read at least every this many loop turns. */
const POLL_TURNS_MAX = 4;
/**
 * The ring's busy-spin before a sleep runs only when the last sleep ended within this (us): a
 * request then came soon after the ring emptied, and a spin (~4 us) may catch the next one without
 * a futex sleep and wake. At 1,000 requests/s the sleeps last ~1 ms and the spin never caught one.
 */
const SPIN_AFTER_SLEEP_US_MAX = 200;

function fatal(e: unknown): never {
  // A batch that cannot be applied and journaled in order cannot be acknowledged: stop (a failing
  // journal write is retried inside Journal.append and never lands here).
  log.fatal('ringbook: matcher thread failed, stopping', e);
  process.exit(70);
}

function post(m: FromMatcher, transfer: ArrayBuffer[] = []): void {
  parentPort?.postMessage(m, transfer);
}

const matcher = new Matcher(engine, requests, events, {
  batch_requests_max: data.batch_requests_max,
  accounts_max: data.engine_config.limits.accounts_max,
  now_ms: () => Date.now() + data.clock_offset_ms,
  commit: journal === null ? undefined : (id, time, records, count) => journal.append(id, time, records, count),
  afterCommitted: journal === null ? undefined : () => journal.afterAck(),
  stamp_batches: data.stamp_batches,
});

const staging = new EngineStaging();

/**
 * At a batch boundary, `due`: a snapshot falls due here (periodic, or `on_demand`: the front asked).
 * Copies the state after the last applied batch and posts it (the front writes the file), or, with
 * every kept set still being read, defers it (takeDue) and tells the front; one deferred earlier
 * is taken here once a set is free.
 */
function snapshot(due: boolean, on_demand: boolean): void {
  const t0 = performance.now();
  const deferred_earlier = staging.waiting_since !== null;
  const staged = staging.takeDue(matcher, due);
  if (staged === null) {
    if (due) post({ type: 'snapshot_deferred', batch_id: matcher.batch_id, on_demand });
    return;
  }
  // Off its schedule (asked for, or deferred): the front learns the batch from this message.
  const off_schedule = on_demand || deferred_earlier;
  const pause_us = new Int32Array(new SharedArrayBuffer(4));
  post({
    type: 'snapshot', batch_id: matcher.batch_id, batch_time_ms: matcher.last_time_ms, engine: staged,
    copy_ms: performance.now() - t0, pause_us, on_demand: off_schedule,
  });
  // The whole pause, the post included, as a cluster matcher's snapshot_capture_ms counts it.
  Atomics.store(pause_us, 0, Math.max(1, Math.round((performance.now() - t0) * 1000)));
  Atomics.notify(pause_us, 0); // the front may wait for it (coordinator.ts matcherPauseMs)
  if (off_schedule) front_capture_deadline_ms = Date.now() + FRONT_CAPTURE_WAIT_MS_MAX;
}

function handle(m: ToMatcher): void {
  if (m.type === 'snapshot') {
    snapshot_requested = true;
  } else if (m.type === 'snapshot_captured') {
    front_capture_deadline_ms = 0;
  } else if (m.type === 'batch') {
    batch_requested = true;
  } else if (m.type === 'memory') {
    answerMemoryQuestion('matcher', m.ask); // its event loop never runs: the channel would not reach it
  } else if (m.type === 'trim' && journal !== null) {
    try {
      const deleted = journal.trimThrough(m.through_batch_id);
      post({ type: 'trimmed', through_batch_id: m.through_batch_id, deleted });
    } catch (e) {
      log.error('ringbook: journal trim failed (the journal is intact)', e);
    }
  }
}

/** Loop turns since the front's messages were last read. */
let turns_since_poll = 0;

/** Handles the front's messages that arrived; true when there was one. */
function pollMessages(): boolean {
  turns_since_poll = 0;
  if (parentPort === null) return false;
  let any = false;
  for (let m = receiveMessageOnPort(parentPort); m !== undefined; m = receiveMessageOnPort(parentPort)) {
    handle(m.message as ToMatcher);
    any = true;
  }
  return any;
}

function start(): void {
  const t0 = performance.now();
  // First, so the replay already runs where the live batches will.
  const pin = data.cpu === null ? null : pinCurrentThread(data.cpu);
  let from = 1;
  if (restored !== null && data.snapshot !== null) {
    matcher.resume(data.snapshot.batch_id, restored.addresses, restored.canonical.batch_time_ms);
    from = data.snapshot.batch_id + 1;
    journal?.resumeAfter(data.snapshot.batch_id);
  } else {
    matcher.genesis();
  }
  let replayed = 0;
  if (journal !== null) {
    for (const b of journal.readTransient(from)) {
      matcher.replay(b.batch_id, b.time_ms, b.records, b.count);
      replayed++;
    }
  }
  // Before 'ready': the journal's LMDB storer thread, started by Journal.open from this thread,
  // carries this thread's name (Linux copies the creator's comm) until its boot names it rb-storer,
  // and the front finds the matcher thread by its name once it is ready (threads.matcher_slice_us,
  // thread priorities): with two threads named rb-matcher the slice was not set (a test run under
  // load caught it). The thread names itself before it opens LMDB, so its open being over is
  // enough; its boot overlaps the replay above.
  journal?.awaitStorerOpen();
  log.debug(`ringbook: matcher thread ready at batch ${matcher.batch_id}`, { batch_id: matcher.batch_id, replayed_batches: replayed });
  post({
    type: 'ready', replayed_batches: replayed, batch_id: matcher.batch_id,
    snapshot_batch_id: data.snapshot === null ? null : data.snapshot.batch_id, replay_ms: performance.now() - t0, pin,
  });
}

async function run(): Promise<void> {
  start();
  const every = data.snapshot_every_batches;
  const offset_ms = data.clock_offset_ms;
  // Spin before the first sleep as before (a burst after start finds the spin useful).
  let spin_before_sleep = true;
  for (;;) {
    if (++turns_since_poll >= POLL_TURNS_MAX) pollMessages();
    if (snapshot_requested) {
      snapshot_requested = false;
      snapshot(true, true);
    } else if (staging.deferredTakeable()) {
      snapshot(false, false); // deferred: taken here once a kept set is free (asked without a clock read)
    }
    if (front_capture_deadline_ms !== 0) {
      const left_ms = front_capture_deadline_ms - Date.now();
      // Polls every 1 ms (as before): a sleep on the ring would return at once while requests wait.
      if (left_ms > 0) {
        Atomics.wait(capture_pause, 0, 0, Math.min(left_ms, 1));
        pollMessages(); // the front's snapshot_captured ends this wait
        continue;
      }
      front_capture_deadline_ms = 0;
    }
    if (requests.available() > 0) {
      const applied = matcher.runBatch();
      if (applied > 0) batch_requested = false; // a batch after the request: it is answered
      if (applied > 0 && every > 0 && matcher.batch_id % every === 0) snapshot(true, false);
      // Requests keep coming: top the journal's reserve up only when it is nearly used (its
      // answers are out; the next batch waits for one step: 256 KB of zeros, no sync).
      journal?.reserveAhead(false);
      continue;
    }
    if (requests.isClosed()) break;
    // Idle: a forced inclusion that is due gets its own batch, as does the front's request for one
    // (an empty batch; a due one answers it too); otherwise sleep on the ring until a request, a
    // message from the front, or the next due time. One clock read for the turn.
    const wall_ms = Date.now();
    const ran_due = matcher.runDueBatch(wall_ms + offset_ms);
    if (ran_due || batch_requested) {
      if (!ran_due) matcher.runEmptyBatch();
      batch_requested = false;
      // A periodic snapshot falls on batch numbers, empty batches included (the front expects it).
      if (every > 0 && matcher.batch_id % every === 0) snapshot(true, false);
      continue;
    }
    // Nothing waits: a moment to hand the journal's write-ahead batches that waited long enough to
    // its LMDB storer thread and to top its reserve up (src/journal/wal_store.ts, reserve.ts), then
    // look at the ring again before sleeping.
    if (journal?.storeIdle(wall_ms) === true) continue;
    if (journal?.reserveAhead(true) === true) continue;
    // The front's messages are read after the sleep is announced (before_sleep), so none posted
    // before its nudge is slept through.
    requests.spin_iterations = spin_before_sleep ? RING_WAIT_SPIN_ITERATIONS_DEFAULT : 0;
    const slept_from_ms = performance.now();
    requests.waitForDataOnce(matcher.idleMs(100, wall_ms + offset_ms), pollMessages);
    spin_before_sleep = (performance.now() - slept_from_ms) * 1000 < SPIN_AFTER_SLEEP_US_MAX;
  }
  if (journal !== null) await journal.close();
  events.close();
  post({ type: 'stopped', batch_id: matcher.batch_id, requests_applied: matcher.requests_applied });
}

run().catch(fatal);
