// The front's answer spin (src/gateway/answer_spin.ts, config front.answer_spin_us): bounded per
// waiting request (it turns the loop only until answer_spin_us after the OLDEST waiting request's
// write), whatever else commits, and by a hard cap on a run of consecutive turns. First the
// decision on a clock the test drives; then a real MatcherLink (its event pump on the loop bell)
// fed by a stand-in backend: writing a request starts the spin (the pump asleep on the bell is
// roused: before, a lone request's commit still came through the bell, and the spin never ran for
// it), and empty batches committed back to back while the link's one request is never answered do
// not extend it (before, every commit restarted the spin: the front turned its loop as long as
// commits came). Both on a driven clock: no assertion here depends on how fast the machine is.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { describe, expect, it, vi } from 'vitest';
import { ANSWER_SPIN_INFLIGHT_MAX, ANSWER_SPIN_RUN_MS_MAX, AnswerSpin } from '../../src/gateway/answer_spin.js';
import { MatcherLink } from '../../src/gateway/matcher_link.js';
import { loadConfig } from '../../src/config/load.js';
import { engineConfigOf } from '../../src/config/read.js';
import { readModelLimits } from '../../src/read_model/read_model.js';
import { EventWriter } from '../../src/ring/event_writer.js';
import { emptyRequest } from '../../src/engine/types.js';
import type { SpscRing } from '../../src/ring/spsc_ring.js';

/** The clock's steps in these cases: asked every 10 µs. */
const STEP_US = 10;

describe('AnswerSpin on a driven clock', () => {
  it('a request left waiting keeps the loop turning only until answer_spin_us after its write', () => {
    const spin = new AnswerSpin(500);
    const written_ms = 10;
    let last_kept_ms = -1;
    // 20 ms of asking (each ask: the front found the ring empty, e.g. after another batch's commit).
    for (let us = 0; us <= 20_000; us += STEP_US) {
      const now_ms = written_ms + us / 1000;
      if (spin.keepAwake(now_ms, 1, written_ms)) last_kept_ms = now_ms;
    }
    expect(last_kept_ms).toBeGreaterThanOrEqual(written_ms);
    expect(last_kept_ms).toBeLessThan(written_ms + 0.5);
    expect(spin.turns).toBe(500 / STEP_US);
    // A later request does not restart it while the old one waits: the old one is still the oldest.
    expect(spin.keepAwake(31, 2, written_ms)).toBe(false);
    // Once the old one is answered, the oldest is the later one (written at 30.9): its own window.
    expect(spin.keepAwake(31, 1, 30.9)).toBe(true);
    expect(spin.keepAwake(31.4, 1, 30.9)).toBe(false);
  });

  it('no spin with nothing waiting, or with more than ANSWER_SPIN_INFLIGHT_MAX waiting', () => {
    const spin = new AnswerSpin(1_000);
    expect(spin.keepAwake(5, 0, 0)).toBe(false);
    expect(spin.keepAwake(5, ANSWER_SPIN_INFLIGHT_MAX + 1, 4.9)).toBe(false);
    expect(spin.keepAwake(5, ANSWER_SPIN_INFLIGHT_MAX, 4.9)).toBe(true);
    expect(spin.turns).toBe(1);
    expect(() => new AnswerSpin(0)).toThrow(RangeError);
  });

  it('a run of consecutive turns ends at ANSWER_SPIN_RUN_MS_MAX and the spin stays off until nothing waits', () => {
    const spin = new AnswerSpin(10_000);
    // Requests keep coming and being answered, never none waiting: the oldest is always 0.1 ms old.
    let ended_ms = -1;
    for (let us = 0; us <= 3 * ANSWER_SPIN_RUN_MS_MAX * 1000; us += STEP_US) {
      const now_ms = 100 + us / 1000;
      if (!spin.keepAwake(now_ms, 3, now_ms - 0.1)) {
        ended_ms = now_ms;
        break;
      }
    }
    expect(ended_ms - 100).toBeGreaterThanOrEqual(ANSWER_SPIN_RUN_MS_MAX);
    expect(ended_ms - 100).toBeLessThan(ANSWER_SPIN_RUN_MS_MAX + 0.1);
    expect(spin.keepAwake(ended_ms + 1, 3, ended_ms + 0.9), 'capped while requests wait').toBe(false);
    expect(spin.keepAwake(ended_ms + 2, 0, 0)).toBe(false);
    expect(spin.keepAwake(ended_ms + 3, 1, ended_ms + 2.9), 'none waited: the cap is lifted').toBe(true);
  });
});

describe('MatcherLink: the answer spin while batches holding none of its requests commit', () => {
  it('stops at its bound although commits keep coming, and its one request is never answered', async () => {
    /**
     * Below ANSWER_SPIN_RUN_MS_MAX, so the stop seen here is the per-request bound, not the cap on
     * a run. The time is the test's: performance.now (perf_hooks', read for the request's write
     * stamp and by the spin) is driven by a spy, so a loaded machine that delays a loop turn
     * changes nothing (the real-clock version had to retry attempts that got no turn in time).
     */
    const SPIN_US = 5_000;
    const SPIN_MS = SPIN_US / 1000;
    /** Driven clock steps between commits, and how many commits each phase makes. */
    const STEP_MS = 0.1;
    const COMMITS = 20;
    /** Loop turns a started spin is given to show up (it needs one). */
    const TURNS_MAX = 100;
    expect(SPIN_MS + COMMITS * STEP_MS).toBeLessThan(ANSWER_SPIN_RUN_MS_MAX);
    expect(COMMITS * STEP_MS).toBeLessThan(SPIN_MS);
    const cfg = loadConfig({});
    const backend_rings: { events: SpscRing | null } = { events: null };
    const link = new MatcherLink({
      journal_dir: null, engine_config: engineConfigOf(cfg), request_ring_slots: cfg.limits.request_ring_slots,
      event_ring_slots: cfg.limits.event_ring_slots, batch_requests_max: cfg.limits.batch_requests_max,
      read_model: readModelLimits(cfg.limits), answer_spin_us: SPIN_US,
      // A matcher elsewhere (the cluster gateway's seam): here, this test writing the event ring.
      backend: {
        start: (_requests, e) => {
          backend_rings.events = e;
          return Promise.resolve();
        },
        requestsPublished: () => undefined,
        requestBatch: () => true,
        shareForced: () => undefined,
        stop: () => Promise.resolve(),
      },
    });
    await link.start();
    expect(performance).toBe(globalThis.performance);
    const clock = { ms: 1_000 };
    const now = vi.spyOn(performance, 'now').mockImplementation(() => clock.ms);
    try {
      // `make native` builds the loop bell (make test runs it); the spin runs only on the bell.
      expect(link.event_ring_bell, 'the front sleeps on the loop bell').toBe(true);
      const events = backend_rings.events;
      if (events === null) throw new Error('the backend was not started');
      const writer = new EventWriter(events);
      let answered = false;
      const written_ms = clock.ms;
      const written = link.requests.submitWith(emptyRequest(), new Uint8Array(20), `0x${'00'.repeat(20)}`, null, null, null, null, () => {
        answered = true;
      });
      expect(written).toBe(true);
      // The write itself starts the spin (the pump was asleep on the bell, no event has come).
      for (let i = 0; i < TURNS_MAX && link.answer_spin_turns === 0; i++) await nextTurn();
      expect(link.answer_spin_turns, 'a written request starts the spin without any commit').toBeGreaterThan(0);
      let batch_id = 1;
      // Empty batches committed back to back, one per loop turn, the clock `step_ms` further each.
      const commit = async (count: number, step_ms: number): Promise<void> => {
        for (let i = 0; i < count; i++) {
          writer.batchBegin(batch_id, Date.now());
          writer.batchCommitted(batch_id, Date.now(), 0);
          writer.flush();
          batch_id++;
          clock.ms += step_ms;
          await nextTurn();
        }
      };
      const turns_at_write = link.answer_spin_turns;
      await commit(COMMITS, STEP_MS);
      expect(clock.ms - written_ms).toBeLessThan(SPIN_MS);
      expect(link.answer_spin_turns, 'within its window it keeps spinning').toBeGreaterThan(turns_at_write);
      // The window ends: one commit to wake the pump at the bound, then commits keep coming.
      clock.ms = written_ms + SPIN_MS;
      await commit(1, 0);
      const turns_at_bound = link.answer_spin_turns;
      await commit(COMMITS, STEP_MS);
      expect(answered).toBe(false);
      expect(link.inflight()).toBe(1);
      expect(link.answer_spin_turns, 'no turn after its bound, though batches kept committing').toBe(turns_at_bound);
      expect(now).toHaveBeenCalled();
    } finally {
      now.mockRestore();
      await link.stop();
    }
  });
});
