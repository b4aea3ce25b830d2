// The leader's purge of the request stream (src/cluster/request_purge.ts) against a fake stream and
// clock: it purges only below the position of a batch seen confirmed at least the delay (the
// stream's duplicate window plus a quarter) ago, at most every `every_ms`, only while leading
// (checked right before the request), never past the stream's last sequence; a failure is kept
// in the status (a missing permission named), never thrown, and tried again; 0 is off; bad values
// of RINGBOOK_REQUEST_PURGE_EVERY_MS are refused at the start naming it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureLogs, logSettings } from '../../src/util/log.js';
import { clusterSettings } from '../../src/cluster/roles.js';
import {
  describePurgeError, PURGE_POINTS_MAX, purgeDelayMs, RequestPurger, requestWindowWarning, warnShortRequestWindow, type PurgeTarget,
} from '../../src/cluster/request_purge.js';
import { DUPLICATE_WINDOW_MS, REQUEST_PUBLISH_GIVE_UP_MS } from '../../src/cluster/log_format.js';

/** A request stream: sequences 1..last_seq, first_seq moved up by purges; failures injected. */
class FakeStream implements PurgeTarget {
  first_seq = 1;
  last_seq = 0;
  purges: { seq: number; at_ms: number }[] = [];
  infos = 0;
  fail_info: Error | null = null;
  fail_purge: Error | null = null;
  /** Runs while info() is answered (a lease lapsing meanwhile). */
  during_info: () => void = () => undefined;

  constructor(readonly duplicate_window_ms: number, readonly clock: { t: number }) {}

  created = '2026-11-29T00:00:00Z';

  async info(): Promise<{ duplicate_window_ms: number; first_seq: number; last_seq: number; created: string }> {
    this.infos++;
    await Promise.resolve();
    this.during_info();
    if (this.fail_info !== null) throw this.fail_info;
    return { duplicate_window_ms: this.duplicate_window_ms, first_seq: this.first_seq, last_seq: this.last_seq, created: this.created };
  }

  async purgeBelow(seq: number): Promise<number> {
    await Promise.resolve();
    if (this.fail_purge !== null) throw this.fail_purge;
    this.purges.push({ seq, at_ms: this.clock.t });
    const n = Math.max(0, Math.min(seq, this.last_seq + 1) - this.first_seq);
    this.first_seq = Math.max(this.first_seq, seq);
    return n;
  }
}

interface Rig {
  clock: { t: number };
  stream: FakeStream;
  host: { leading: boolean; through: number };
  purger: RequestPurger;
}

function rig(every_ms: number, window_ms = 1_000): Rig {
  const clock = { t: 0 };
  const stream = new FakeStream(window_ms, clock);
  const host = { leading: true, through: 0 };
  const purger = new RequestPurger(every_ms, 'm-test', stream, {
    leading: () => host.leading, requestsThrough: () => host.through, now: () => clock.t,
  });
  return { clock, stream, host, purger };
}

/** A deterministic generator (xorshift32). */
function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

describe('the request stream purge', () => {
  // Hundreds of purge lines otherwise; what is said is checked in the status.
  const log_settings = logSettings();
  beforeAll(() => configureLogs({ ...log_settings, level: 'fatal' }));
  afterAll(() => configureLogs(log_settings));

  it('the delay is the stream\'s duplicate window plus a quarter of it', () => {
    expect(purgeDelayMs(120_000)).toBe(150_000);
    expect(purgeDelayMs(1_000)).toBe(1_250);
    expect(purgeDelayMs(0)).toBe(0);
  });

  it('purges only below a position seen confirmed at least the delay before, at most every every_ms, never past the last sequence', async () => {
    const every_ms = 300;
    const { clock, stream, host, purger } = rig(every_ms);
    const delay = purgeDelayMs(stream.duplicate_window_ms);
    const seen: { at_ms: number; through: number }[] = [];
    const rnd = prng(29);
    for (let step = 0; step < 3_000; step++) {
      // Requests arrive, batches consume some of them; the purger ticks now and then.
      stream.last_seq += Math.floor(rnd() * 5);
      if (rnd() < 0.5) host.through = Math.max(host.through, stream.last_seq - Math.floor(rnd() * 3));
      seen.push({ at_ms: clock.t, through: host.through });
      await purger.tick();
      clock.t += Math.floor(rnd() * 40);
    }
    expect(stream.purges.length).toBeGreaterThan(10);
    let last_at = Number.NEGATIVE_INFINITY;
    for (const p of stream.purges) {
      // A position the matcher held at least the delay before the purge, and never past what was read.
      const witnessed = seen.some((x) => x.through === p.seq && x.at_ms <= p.at_ms - delay);
      expect(witnessed, `purge below ${p.seq} at ${p.at_ms}`).toBe(true);
      expect(p.at_ms - last_at).toBeGreaterThanOrEqual(every_ms);
      last_at = p.at_ms;
    }
    const s = purger.status;
    expect(s.delay_ms).toBe(delay);
    expect(s.purges).toBe(stream.purges.length);
    expect(s.purged_through).toBe(stream.purges[stream.purges.length - 1].seq - 1);
    expect(s.last_error).toBeNull();
    // Attempts (stream info reads) at most one per interval.
    expect(stream.infos).toBeLessThanOrEqual(Math.floor(clock.t / every_ms) + 1);
  });

  it('sends nothing while not leading, nor when the lease lapses while the stream is read', async () => {
    const { clock, stream, host, purger } = rig(100);
    stream.last_seq = 50;
    host.through = 40;
    await purger.tick();
    clock.t = 10_000;
    host.leading = false;
    await purger.tick();
    expect(stream.infos).toBe(1);
    host.leading = true;
    stream.during_info = () => {
      host.leading = false;
    };
    await purger.tick();
    expect(stream.infos).toBe(2);
    expect(stream.purges).toEqual([]);
    // Leading again: the same point is purged at the next interval.
    stream.during_info = () => undefined;
    host.leading = true;
    clock.t += 100;
    await purger.tick();
    expect(stream.purges).toEqual([{ seq: 40, at_ms: clock.t }]);
  });

  it('a failure is kept in the status and tried again at the next interval, never thrown; a missing permission is named', async () => {
    const { clock, stream, host, purger } = rig(100);
    stream.last_seq = 20;
    host.through = 10;
    await purger.tick();
    clock.t = 5_000;
    stream.fail_purge = new Error('Permissions Violation for Publish to "$JS.API.STREAM.PURGE.RB_REQUESTS"');
    await purger.tick();
    const said = purger.status.last_error ?? '';
    expect(said).toMatch(/^Permissions Violation for Publish to "\$JS\.API\.STREAM\.PURGE\.RB_REQUESTS"/);
    expect(said).toContain('config/nats-authorization.conf');
    // Not before the interval; then again.
    clock.t += 50;
    stream.fail_purge = null;
    await purger.tick();
    expect(stream.purges).toEqual([]);
    clock.t += 50;
    await purger.tick();
    expect(stream.purges.map((p) => p.seq)).toEqual([10]);
    expect(purger.status.last_error).toBeNull();
    // A stream that cannot be read: the same.
    host.through = 15;
    clock.t += 10_000;
    stream.fail_info = new Error('TimeoutError: timeout');
    await purger.tick();
    expect(purger.status.last_error).toBe('TimeoutError: timeout');
    expect(stream.purges.length).toBe(1);
  });

  it('a position past the stream\'s last sequence (a stream recreated under the matchers) is not purged at', async () => {
    const { clock, stream, host, purger } = rig(100);
    stream.last_seq = 5;
    host.through = 900;
    await purger.tick();
    clock.t = 10_000;
    await purger.tick();
    expect(stream.purges).toEqual([]);
    expect(purger.status.last_error).toMatch(/past the request stream's last sequence 5/);
  });

  it('never sends a purge below sequence 2 (nats-server 2.9 removes every message for `seq: 1`)', async () => {
    const { clock, stream, host, purger } = rig(100);
    // A stream that reports no first sequence (empty) and a batch that consumed through 1.
    stream.first_seq = 0;
    stream.last_seq = 3;
    host.through = 1;
    await purger.tick();
    clock.t = 10_000;
    await purger.tick();
    expect(stream.infos).toBe(2);
    expect(stream.purges).toEqual([]);
    host.through = 2;
    clock.t += 10_000;
    await purger.tick();
    clock.t += 10_000;
    await purger.tick();
    expect(stream.purges.map((p) => p.seq)).toEqual([2]);
  });

  it('a stream recreated under the matcher (another creation time): no purge at the old positions, none until a restart', async () => {
    const { clock, stream, host, purger } = rig(100);
    stream.last_seq = 50;
    host.through = 40;
    await purger.tick();
    clock.t = 10_000;
    await purger.tick();
    expect(stream.purges.map((p) => p.seq)).toEqual([40]);
    host.through = 45;
    await purger.tick();
    // Recreated, and already past the old positions: a purge below 45 would take unconsumed requests.
    stream.created = '2026-11-29T12:00:00Z';
    stream.first_seq = 1;
    stream.last_seq = 80;
    for (let i = 0; i < 5; i++) {
      clock.t += 10_000;
      await purger.tick();
    }
    expect(stream.purges.map((p) => p.seq)).toEqual([40]);
    expect(purger.status.last_error).toMatch(/recreated .*no purge until this matcher restarts/);
  });

  it('0 is off: nothing sampled or purged, no timer', async () => {
    const { clock, stream, host, purger } = rig(0);
    stream.last_seq = 50;
    host.through = 40;
    purger.start();
    for (let i = 0; i < 10; i++) {
      await purger.tick();
      clock.t += 100_000;
    }
    await purger.stop();
    expect(stream.infos).toBe(0);
    expect(purger.status.every_ms).toBe(0);
  });

  it(`keeps at most ${PURGE_POINTS_MAX} points, thinned: what it purges at is still a position held the delay before`, async () => {
    // No attempt while the points pile up (not leading), a window long enough that none is old enough.
    const { clock, stream, host, purger } = rig(1, 60_000);
    host.leading = false;
    const seen = new Map<number, number>();
    for (let i = 1; i <= 3 * PURGE_POINTS_MAX; i++) {
      host.through = i;
      stream.last_seq = i;
      seen.set(i, clock.t);
      await purger.tick();
      clock.t += 10;
    }
    host.leading = true;
    await purger.tick();
    const p = stream.purges[0];
    expect(p).toBeDefined();
    expect(seen.get(p.seq)).toBeLessThanOrEqual(p.at_ms - purgeDelayMs(60_000));
    // Close to the newest old-enough position (thinning halves the resolution, never loses the span).
    expect(p.seq).toBeGreaterThan((p.at_ms - purgeDelayMs(60_000)) / 10 - 64);
  });

  it('a duplicate window shorter than the gateways\' 30 s of publish retries is warned about, naming it and the minimum', async () => {
    // On the old code nothing said it: a retry after such a window is stored twice, purge or not.
    expect(REQUEST_PUBLISH_GIVE_UP_MS).toBe(30_000);
    expect(requestWindowWarning(DUPLICATE_WINDOW_MS)).toBeNull();
    expect(requestWindowWarning(REQUEST_PUBLISH_GIVE_UP_MS)).toBeNull();
    const short = requestWindowWarning(10_000);
    expect(short).toContain('request stream RB_REQUESTS has a duplicate window of 10000 ms, shorter than the 30000 ms a gateway retries a request publish');
    expect(short).toContain('set the window to at least 30000 ms (the roles create it with 120000 ms: nats stream edit RB_REQUESTS --dupe-window 2m)');
    expect(requestWindowWarning(29_999)).toContain('29999 ms');
    // The gateway's check at its start: the stream's window read, the warning logged and returned.
    const { stream, purger } = rig(60_000, 10_000);
    expect(await warnShortRequestWindow(stream, 'gateway g-test')).toBe(short);
    expect(await warnShortRequestWindow({ info: () => Promise.reject(new Error('down')) }, 'gateway g-test')).toBeNull();
    // The matcher's: at its start, then once per new value its purge reads (an edit later).
    expect(await purger.checkWindow()).toBe(short);
    expect(await purger.checkWindow()).toBeNull();
    (stream as { duplicate_window_ms: number }).duplicate_window_ms = 20_000;
    expect(await purger.checkWindow()).toContain('duplicate window of 20000 ms');
    (stream as { duplicate_window_ms: number }).duplicate_window_ms = DUPLICATE_WINDOW_MS;
    expect(await purger.checkWindow()).toBeNull();
  });

  it('describes errors on one line, bounded', () => {
    expect(describePurgeError(new Error('a\n  b'))).toBe('a b');
    expect(describePurgeError('x'.repeat(1_000)).length).toBe(300);
  });

  it('RINGBOOK_REQUEST_PURGE_EVERY_MS: default 60 s, 0 off, 0..86,400,000 ms; anything else refused at the start naming it', () => {
    const env = (v: string | undefined): NodeJS.ProcessEnv => ({ RINGBOOK_NATS_URLS: 'nats://127.0.0.1:4222', RINGBOOK_REQUEST_PURGE_EVERY_MS: v });
    expect(clusterSettings('matcher', env(undefined)).request_purge_every_ms).toBe(60_000);
    expect(clusterSettings('matcher', env('')).request_purge_every_ms).toBe(60_000);
    expect(clusterSettings('matcher', env('0')).request_purge_every_ms).toBe(0);
    expect(clusterSettings('matcher', env('250')).request_purge_every_ms).toBe(250);
    expect(clusterSettings('matcher', env('86400000')).request_purge_every_ms).toBe(86_400_000);
    for (const bad of ['-1', '1e3', 'ten', '100.5', ' 5', '86400001', '99999999999999999999']) {
      expect(() => clusterSettings('matcher', env(bad)), bad).toThrow(/RINGBOOK_REQUEST_PURGE_EVERY_MS/);
    }
  });
});
