// Alternating A/B runs of a small bench (doorbell.ts, front_wake.ts): each way run in turn, the
// whole round `runs` times, so both ways see the same machine; medians per way.
import { readFileSync } from 'node:fs';
import { Knobs } from './knobs.js';
import { medianUpperMiddle } from './quantile.js';

/** The knobs of a ping bench: pings per run (default 5,000) and rounds of all its ways (`runs`). */
export function pingRunKnobs(runs_default: number): { pings: number; runs: number } {
  const knobs = new Knobs();
  const pings = knobs.number('pings', 5000, 100, 1_000_000);
  const runs = knobs.number('runs', runs_default, 1, 20);
  knobs.finish();
  return { pings, runs };
}

/** Runs `one` for each of `ways` in turn, the round `runs` times; prints `line` after each run. */
export async function alternating<W extends string, R>(
  ways: readonly W[], runs: number, one: (way: W) => Promise<R>, line: (way: W, result: R) => string,
): Promise<{ way: W; result: R }[]> {
  const out: { way: W; result: R }[] = [];
  for (let r = 0; r < runs; r++) {
    for (const way of ways) {
      const result = await one(way);
      out.push({ way, result });
      console.log(line(way, result));
    }
  }
  return out;
}

/** The upper-middle median of each of `fields` over the runs of `way`, or null when it did not run. */
export function medians<W extends string, R>(results: readonly { way: W; result: R }[], way: W, fields: readonly (keyof R & string)[]): Record<string, number> | null {
  const of = results.filter((r) => r.way === way).map((r) => r.result);
  if (of.length === 0) return null;
  const out: Record<string, number> = {};
  for (const f of fields) out[f] = medianUpperMiddle(of.map((r) => Number(r[f])));
  return out;
}

/** This thread's voluntary context switches (Linux /proc): its sleeps. */
export function voluntarySwitches(): number {
  const m = /voluntary_ctxt_switches:\s*(\d+)/.exec(readFileSync('/proc/thread-self/status', 'utf8'));
  return m ? Number(m[1]) : 0;
}
