// The snapshot rule both matchers follow (src/matcher/engine_staging.ts, EngineStaging.takeDue,
// h31f): a snapshot due while every kept set is still being read is deferred (never walked and
// packed on the matcher's thread), counted once per due batch, and taken at the first batch
// boundary after a set is free, with the state of that batch; nothing is taken while none waits.
// And the memory rule: a second set unused for SPARE_SET_RELEASE_AFTER_TAKES snapshots is given
// back, and made again when snapshots overlap again.
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { ReplayExecutor } from '../../src/da/replay.js';
import { encodeEngine } from '../../src/matcher/engine_snapshot.js';
import {
  EngineStaging, KEPT_SETS_MAX, releaseStaged, SPARE_SET_RELEASE_AFTER_TAKES, stagedEngineBytes, type StagedEngine,
} from '../../src/matcher/engine_staging.js';
import { generateSequence } from '../engine/generator.js';
import { recordsOf, recordable } from '../da/records.js';

/** An engine that applies generateSequence(3, 600) one batch of 1-3 requests per next() call. */
function stepper(): { ex: ReplayExecutor; next: () => number } {
  const { config, requests: all } = generateSequence(3, 600);
  const requests = all.filter(recordable);
  const ex = new ReplayExecutor(config, {});
  ex.genesis();
  let at = 0;
  let batch_id = 0;
  return {
    ex,
    next: () => {
      batch_id++;
      const n = Math.min(requests.length - at, 1 + (batch_id % 3));
      ex.apply(batch_id, 1_000 * batch_id, recordsOf(requests.slice(at, at + n)), n);
      at += n;
      return batch_id;
    },
  };
}

const bytesNow = (ex: ReplayExecutor): Buffer => Buffer.from(encodeEngine(ex.matcher.captureState()));

describe('EngineStaging.takeDue: a snapshot due while every kept set is read', () => {
  it('is deferred, then taken at the first batch with a set free, with that batch\'s state', () => {
    const { ex, next } = stepper();
    const staging = new EngineStaging();
    const held: StagedEngine[] = [];
    for (let i = 0; i < KEPT_SETS_MAX; i++) {
      next();
      const s = staging.takeDue(ex.matcher, true);
      expect(s, `set ${i} free`).not.toBeNull();
      held.push(s as StagedEngine);
    }
    expect(staging.takeDue(ex.matcher, false), 'none due, none waits: no copy').toBeNull();
    const due_at = next();
    expect(staging.takeDue(ex.matcher, true), 'both sets read: deferred, not copied').toBeNull();
    expect(staging.deferred).toBe(1);
    expect(staging.waiting_since).toBe(due_at);
    next();
    expect(staging.takeDue(ex.matcher, false), 'still both read').toBeNull();
    next();
    expect(staging.takeDue(ex.matcher, true), 'another due one merges into the wait').toBeNull();
    expect(staging.deferred).toBe(2);
    expect(staging.waiting_since, 'the first one due').toBe(due_at);
    // The older copy's walk ends (the writer frees its set).
    expect(stagedEngineBytes(held.shift() as StagedEngine).length).toBeGreaterThan(0);
    const taken_at = next();
    const s = staging.takeDue(ex.matcher, false);
    expect(s, 'a set free: the deferred one is taken though none is due here').not.toBeNull();
    expect(staging.waiting_since).toBeNull();
    const expected = bytesNow(ex);
    next();
    expect(Buffer.compare(stagedEngineBytes(s as StagedEngine), expected), `the copy holds batch ${taken_at}'s state`).toBe(0);
    expect(staging.takeDue(ex.matcher, false), 'taken: nothing waits any more').toBeNull();
    expect(staging.sets_allocated).toBe(KEPT_SETS_MAX);
    for (const h of held) releaseStaged(h);
  });

  it('one set (a cluster matcher\'s): the same rule', () => {
    const { ex, next } = stepper();
    const staging = new EngineStaging(1);
    next();
    const first = staging.takeDue(ex.matcher, true) as StagedEngine;
    expect(first).not.toBeNull();
    next();
    expect(staging.takeDue(ex.matcher, true)).toBeNull();
    releaseStaged(first);
    next();
    expect(staging.takeDue(ex.matcher, false), 'taken once the set is free').not.toBeNull();
    expect(staging.deferred).toBe(1);
    expect(staging.sets_allocated).toBe(1);
  });
});

describe('EngineStaging: the second set\'s memory', () => {
  it(`is given back after ${SPARE_SET_RELEASE_AFTER_TAKES} snapshots the first set served, and made again when needed`, () => {
    const { ex, next } = stepper();
    const staging = new EngineStaging();
    next();
    const a = staging.take(ex.matcher) as StagedEngine;
    const b = staging.take(ex.matcher) as StagedEngine;
    expect(staging.sets_allocated, 'overlapping snapshots: a second set').toBe(2);
    releaseStaged(a);
    releaseStaged(b);
    for (let i = 1; i < SPARE_SET_RELEASE_AFTER_TAKES; i++) {
      next();
      releaseStaged(staging.take(ex.matcher) as StagedEngine);
      expect(staging.sets_allocated, `after ${i} snapshot(s) without it, kept`).toBe(2);
    }
    next();
    const c = staging.take(ex.matcher) as StagedEngine;
    expect(staging.sets_allocated, 'given back').toBe(1);
    expect(staging.spare_sets_released).toBe(1);
    // Overlapping again: made again, and it serves.
    const d = staging.take(ex.matcher);
    expect(d, 'a second set again').not.toBeNull();
    expect(staging.sets_allocated).toBe(2);
    expect(Buffer.compare(stagedEngineBytes(d as StagedEngine), bytesNow(ex))).toBe(0);
    releaseStaged(c);
  });

  it('a second set still being read is never given back', () => {
    const { ex, next } = stepper();
    const staging = new EngineStaging();
    next();
    const a = staging.take(ex.matcher) as StagedEngine;
    const b = staging.take(ex.matcher) as StagedEngine;
    releaseStaged(a);
    // b stays held (its write is slow) while the first set serves every later snapshot.
    for (let i = 0; i < 2 * SPARE_SET_RELEASE_AFTER_TAKES; i++) {
      next();
      releaseStaged(staging.take(ex.matcher) as StagedEngine);
    }
    expect(staging.sets_allocated).toBe(2);
    expect(staging.held).toBe(1);
    expect(stagedEngineBytes(b).length, 'its copy still walks').toBeGreaterThan(0);
  });
});
