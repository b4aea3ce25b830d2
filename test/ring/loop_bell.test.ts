// The front's sleep on the event ring (src/ring/ring_wake.ts): an event-loop consumer on the loop
// bell (native/loop_bell.c) or in Atomics.waitAsync, fed by a real worker-thread producer that
// pauses often, so the consumer falls asleep thousands of times and every record must come from
// a wake-up; a lost one would stall the test past its bound. Also RINGBOOK_LOOP_BELL (each case a
// fresh process of the compiled dist/src/util/loop_bell.js) and a server given a misspelt value.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { H_CONSUMER_BELL, H_CONSUMER_WAITERS } from '../../src/ring/ring_layout.js';
import { loopBellChoice, nativeLoopBell } from '../../src/util/loop_bell.js';
import { consumeOnLoop } from '../../src/ring/ring_wake.js';
import { REPO_ROOT, startServer } from '../server/harness.js';
import { nativeChoiceIn } from './native_choice.js';
import { assertDistFresh, startWorker } from './ring_peer.js';
import { Rng, RECORD_WORDS, checkRecord } from './ring_records.js';

const run = promisify(execFile);
const BELL_JS = path.join(REPO_ROOT, 'dist', 'src', 'util', 'loop_bell.js');
const BUILT = process.platform === 'linux'; // `make native` builds native/build/loop_bell.node
const WAIT_TIMEOUT_MS = 3_000;
/** Far above a healthy run (~2 s here, loaded); a lost wake-up never ends without the close. */
const RUN_BOUND_MS = 20_000;
/**
 * Records per woken-consumer run (the producer pauses every 7): 1,750-3,000 sleeps measured
 * (quiet to single publishing, bell and atomics), 3.5x the 500 asserted or more. Was 30,000
 * (3,500-8,000 sleeps, ~1.5 s a run, four runs of the file's 10.7 s in CI).
 */
const RECORDS = 15_000;
/** The kept-awake runs: awake for all of them, then for the first half only (~600 sleeps after, 100 asserted). */
const AWAKE_RECORDS = 10_000;

/** Consumes `count` records from a worker producer on this loop, checking each; returns the consumer's figures. */
async function consume(
  how: 'bell' | 'atomics', mode: 'single' | 'quiet', count: number, keepAwake?: (records: number) => boolean,
): Promise<{ bell: boolean; sleeps: number; records: number }> {
  assertDistFresh();
  const seed = 0x51eeb;
  const ring = SpscRing.create({ capacity_slots: 64, slot_words: RECORD_WORDS });
  const rng = new Rng(seed);
  let index = 0;
  let failure: string | null = null;
  // Opened by the drain that reads the last record (or finds a bad one): the wait below is on
  // that event, not on a polling sleep.
  let openDone = (): void => {};
  const done = new Promise<void>((resolve) => { openDone = resolve; });
  const drain = (): void => {
    const n = ring.available();
    for (let i = 0; i < n && failure === null; i++) failure = checkRecord(ring, ring.slotOffset(i), index++, rng);
    ring.release(n);
    if (index >= count || failure !== null) openDone();
  };
  const consumer = consumeOnLoop(ring, drain, how, keepAwake === undefined ? undefined : () => keepAwake(index));
  const report = await startWorker({
    role: 'producer', sab: ring.sab, seed, count, mode, loud_every: 4, batch_max: 3, wait_timeout_ms: WAIT_TIMEOUT_MS, pause_every: 7,
  }, () => ring.close());
  expect(report.error).toBeNull();
  // Every record, then the close, must reach the consumer through its wake-ups.
  // RUN_BOUND_MS only ends a stalled run (a lost wake-up), it measures nothing.
  let bound: NodeJS.Timeout | undefined;
  await Promise.race([done, new Promise<void>((resolve) => { bound = setTimeout(resolve, RUN_BOUND_MS); })]);
  clearTimeout(bound);
  expect(index, 'every record arrived before the close (a lost wake-up stalls the consumer)').toBe(count);
  ring.close();
  await consumer.done;
  expect(failure).toBeNull();
  expect(Atomics.load(ring.i32, H_CONSUMER_BELL), 'the bell is taken off the ring once it is closed').toBe(0);
  expect(Atomics.load(ring.i32, H_CONSUMER_WAITERS)).toBe(0);
  return { bell: consumer.bell, sleeps: ring.consumer_sleep_count, records: index };
}

describe('an event-loop consumer woken by a worker producer', () => {
  for (const how of ['bell', 'atomics'] as const) {
    for (const mode of ['single', 'quiet'] as const) {
      it(`${how}, ${mode} publishing: every record in order, after thousands of sleeps`, async () => {
        const r = await consume(how, mode, RECORDS);
        expect(r.records).toBe(RECORDS);
        expect(r.bell).toBe(how === 'bell' && BUILT);
        // Pauses every 7 records: the consumer slept and was woken many times (not one long drain).
        expect(r.sleeps).toBeGreaterThan(500);
      }, RUN_BOUND_MS + 20_000);
    }
  }

  it.runIf(BUILT)('kept awake (the front\'s answer spin): every record is read without one sleep; once no longer, it sleeps and is woken again', async () => {
    const awake = await consume('bell', 'quiet', AWAKE_RECORDS, () => true);
    expect(awake.records).toBe(AWAKE_RECORDS);
    expect(awake.sleeps, 'a consumer kept awake never announced a sleep: the producer rang nothing').toBe(0);
    // Awake for the first half only: the second half comes through sleeps and wake-ups.
    const half = await consume('bell', 'quiet', AWAKE_RECORDS, (records) => records < AWAKE_RECORDS / 2);
    expect(half.records).toBe(AWAKE_RECORDS);
    expect(half.sleeps).toBeGreaterThan(100);
  }, 2 * RUN_BOUND_MS + 20_000);

  it('a drain that throws ends the consumer with that error and takes its bell off the ring', async () => {
    const ring = SpscRing.create({ capacity_slots: 16, slot_words: RECORD_WORDS });
    const consumer = consumeOnLoop(ring, () => {
      throw new Error('drain failed');
    });
    const o = ring.tryClaim();
    ring.i32[o] = 1;
    ring.publish();
    await expect(consumer.done).rejects.toThrow('drain failed');
    expect(Atomics.load(ring.i32, H_CONSUMER_BELL)).toBe(0);
  });

  it.runIf(BUILT)('a ring rung after its bell closed wakes nothing, even when a new bell took its slot; open bells get distinct ids', async () => {
    const bell = nativeLoopBell();
    expect(bell, 'native/build/loop_bell.node loads (make native)').not.toBeNull();
    if (bell === null) return;
    const calls = { a: 0, b: 0, c: 0 };
    // A gate opened by the callbacks themselves once b and c have both run (no sleep standing in
    // for "a loop turn"); the test's timeout bounds it.
    let openGate = (): void => {};
    const gate = new Promise<void>((resolve) => { openGate = resolve; });
    const called = (which: keyof typeof calls) => (): void => {
      calls[which]++;
      if (calls.b > 0 && calls.c > 0) openGate();
    };
    const a = bell.open(called('a'));
    const b = bell.open(called('b'));
    expect(a).toBeGreaterThan(0);
    expect(b).not.toBe(a);
    expect(bell.close(a)).toBe(true);
    expect(bell.close(a)).toBe(false);
    // c takes a's slot (the lowest free one): only the generation in the id tells a from c.
    const c = bell.open(called('c'));
    expect(c & 0xff, 'c reuses a slot of the table (256 slots)').toBe(a & 0xff);
    expect(c).not.toBe(a);
    expect(bell.ring(a), "a closed bell's id does not ring the bell now in its slot").toBe(false);
    expect(bell.close(a), 'nor closes it').toBe(false);
    expect(bell.ring(c)).toBe(true);
    expect(bell.ring(b)).toBe(true);
    await gate;
    // uv runs every pending async handle of the loop in the same poll phase: one setImmediate
    // (the check phase after it) and a stray call of a's callback would have been counted.
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual({ a: 0, b: 1, c: 1 });
    expect(bell.close(b)).toBe(true);
    expect(bell.close(c)).toBe(true);
    expect(() => bell.open('x' as unknown as () => void)).toThrow('open(function)');
  });

  it.runIf(BUILT)("a producer waking a consumer whose bell it cannot ring throws instead of leaving it asleep", () => {
    const bell = nativeLoopBell();
    if (bell === null) throw new Error('native/build/loop_bell.node does not load (make native)');
    const ring = SpscRing.create({ capacity_slots: 16, slot_words: RECORD_WORDS });
    // The header names a bell this thread's table does not hold (as for a producer with its own table).
    const gone = bell.open(() => {});
    expect(bell.close(gone)).toBe(true);
    ring.setConsumerBell(gone);
    expect(ring.sleepOnBell()).toBe(true);
    const o = ring.tryClaim();
    ring.i32[o] = 1;
    expect(() => ring.publish()).toThrow(`its consumer sleeps on loop bell ${gone}, which is not open`);
    // A consumer that stopped normally cleared the header first: its producer's close rings nothing.
    ring.setConsumerBell(0);
    expect(() => ring.close()).not.toThrow();
  });

  it.runIf(BUILT)('worker threads that exit (or are terminated) with bells open, one just rung, end cleanly', async () => {
    // The bell's handle is closed at the environment's teardown by an async cleanup hook that
    // waits for uv_close; a synchronous hook left the close unfinished (Node crashed here).
    const script = `
      const { Worker } = require('node:worker_threads');
      const code = 'import(' + JSON.stringify(${JSON.stringify(BELL_JS)}) + ').then((m) => {' +
        ' const b = m.nativeLoopBell(); const ids = [b.open(() => {}), b.open(() => {})]; b.ring(ids[0]);' +
        ' require("node:worker_threads").parentPort.postMessage(ids); })';
      (async () => {
        let exits = 0;
        for (let i = 0; i < 12; i++) {
          const w = new Worker(code, { eval: true });
          w.on('message', () => { if (i % 2 === 1) void w.terminate(); });
          const code_ = await new Promise((r) => w.on('exit', r));
          if (i % 2 === 0 && code_ !== 0) throw new Error('worker exit code ' + code_);
          exits++;
        }
        console.log('exits ' + exits);
      })();`;
    const r = await run(process.execPath, ['-e', script], { timeout: 20_000 });
    expect(r.stdout.trim()).toBe('exits 12');
  }, 30_000);
});

/** What nativeLoopBell() gives in a fresh process of `bell_js` with RINGBOOK_LOOP_BELL=`value`. */
const bellIn = (bell_js: string, value: string | undefined): Promise<string> =>
  nativeChoiceIn(bell_js, 'nativeLoopBell', 'RINGBOOK_LOOP_BELL', value);

describe('RINGBOOK_LOOP_BELL', () => {
  it('takes auto (or unset), native and atomics; anything else is an error naming them', () => {
    expect(loopBellChoice({})).toEqual({ choice: 'auto' });
    for (const v of ['auto', 'native', 'atomics'] as const) expect(loopBellChoice({ RINGBOOK_LOOP_BELL: v })).toEqual({ choice: v });
    for (const bad of ['atomic', 'bell', 'Native', '0']) {
      expect(loopBellChoice({ RINGBOOK_LOOP_BELL: bad })).toEqual({
        error: `RINGBOOK_LOOP_BELL must be one of auto, native, atomics (or unset: auto), not ${JSON.stringify(bad)}`,
      });
    }
  });

  it('a thread loads the bell as asked; without the module auto falls back and native is an error', async () => {
    const built = BUILT ? 'native' : 'atomics';
    expect(await bellIn(BELL_JS, undefined)).toBe(built);
    expect(await bellIn(BELL_JS, 'atomics')).toBe('atomics');
    expect(await bellIn(BELL_JS, 'atomic')).toMatch(/^error: RINGBOOK_LOOP_BELL must be one of auto, native, atomics/);
    // The compiled module tree where no native/build/loop_bell.node sits above it.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-bell-'));
    try {
      for (const f of ['util/loop_bell.js', 'util/futex.js', 'util/native_module.js']) {
        fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
        fs.copyFileSync(path.join(path.dirname(BELL_JS), '..', f), path.join(dir, f));
      }
      fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
      expect(await bellIn(path.join(dir, 'util', 'loop_bell.js'), 'auto')).toBe('atomics');
      expect(await bellIn(path.join(dir, 'util', 'loop_bell.js'), 'native')).toMatch(/^error: RINGBOOK_LOOP_BELL=native, but /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the server refuses to start on a misspelt value, with the accepted values in its message', async () => {
    await expect(startServer({ env: { RINGBOOK_LOOP_BELL: 'atomic' } })).rejects.toThrow(/server exited \(code 1[\s\S]*RINGBOOK_LOOP_BELL must be one of auto, native, atomics/);
  });
});
