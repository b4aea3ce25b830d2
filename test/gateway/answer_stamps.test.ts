// An answer owns at most one set of stage stamps (envelope.ts holdStamps): handing it a second
// while it holds one is an owner bug and throws, instead of losing the first to the GC.
import { describe, expect, it } from 'vitest';
import { releaseStamps, stampsOutstanding, takeStamps } from '../../src/gateway/stage_timings.js';
import { RecordingAnswer } from './recording_answer.js';

describe('Answer.holdStamps', () => {
  it('throws when the answer holds stamps already, and keeps the ones it held', () => {
    const outstanding = stampsOutstanding();
    const answer = new RecordingAnswer();
    const first = takeStamps();
    const second = takeStamps();
    answer.holdStamps(first);
    expect(() => answer.holdStamps(second)).toThrow(/holds stamps already/);
    expect(answer.stamps).toBe(first);
    // Handed out and back (the verify stage's round trip): accepted again.
    expect(answer.detachStamps()).toBe(first);
    answer.holdStamps(first);
    // The reply gives back what it holds; the refused set is still its caller's.
    expect(answer.ok({ fine: true })).toBe(true);
    expect(first.pooled).toBe(true);
    expect(second.pooled).toBe(false);
    releaseStamps(second);
    expect(stampsOutstanding()).toBe(outstanding);
  });

  it('an answer that ended gives stamps handed back to the pool at once', () => {
    const answer = new RecordingAnswer();
    expect(answer.ok(null)).toBe(true);
    const s = takeStamps();
    answer.holdStamps(s);
    expect(s.pooled).toBe(true);
    expect(answer.stamps).toBeNull();
  });
});
