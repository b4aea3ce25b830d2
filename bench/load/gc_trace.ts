// The server's garbage collections per phase, from V8's `--trace-gc-nvp` lines on its stdout
// (`--gc`: bench/load.ts adds the flag and reads the lines as they arrive). One nvp line per GC,
// prefixed `[pid:isolate]`: every isolate (the front, the matcher, the DA worker, the verify
// workers) writes to the same stdout, and each line's `allocated=` is what that isolate allocated
// since its previous GC, so their sum over a phase is the isolate's bytes allocated in it. Works
// on any build of the server (`--server-main`: an A/B of two builds reads both the same way).
//
// Which isolate is the front: an isolate's time stamps count from its own start, and the main
// isolate starts first (the workers are created after the modules load), so the front is the
// isolate whose stamps lag the line's arrival here the least.
import { medianLowerMiddle } from '../quantile.js';

export interface IsolateGc {
  /** Bytes allocated (sum of `allocated=`; what was allocated after the last GC of a phase falls in the next). */
  allocated: number;
  /** Bytes promoted to the old generation by scavenges. */
  promoted: number;
  /** Young-generation collections (`gc=s`) and the rest (mark-compact, incremental finish). */
  scavenges: number;
  majors: number;
  /** The isolate's own pause (main thread stopped), ms, by kind. */
  scavenge_pause_ms: number;
  major_pause_ms: number;
}

/** More than any young generation plus a heap's growth between two GCs: 64 GiB. */
const ALLOCATED_PER_GC_MAX = 2 ** 36;

const NVP = /^\[(\d+):(0x[0-9a-f]+)\]\s+([\d.]+) ms: pause=([\d.]+) .*?\bgc=(\w+)\b/;

function field(line: string, name: string): number {
  const at = line.indexOf(` ${name}=`);
  if (at < 0) return 0;
  return parseFloat(line.slice(at + name.length + 2));
}

function emptyGc(): IsolateGc {
  return { allocated: 0, promoted: 0, scavenges: 0, majors: 0, scavenge_pause_ms: 0, major_pause_ms: 0 };
}

export class GcTrace {
  private readonly isolates = new Map<string, IsolateGc>();
  /** Per isolate: the least (arrival here - the line's own stamp), ms. */
  private readonly lag_ms = new Map<string, number>();
  private partial = '';
  /** nvp lines left out for an implausible `allocated=` (see feed). */
  skipped = 0;
  /** Every pause read, in arrival order: isolate, its stamp (ms since the isolate's start; V8 prints it at the GC's end), pause ms. */
  private readonly events: { iso: string; stamp_ms: number; pause_ms: number }[] = [];

  /** A chunk of the server's stdout, as it arrives (`now_ms`: performance.now()). */
  feed(chunk: string, now_ms: number): void {
    const text = this.partial + chunk;
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      const m = NVP.exec(line);
      if (m === null) continue;
      const iso = m[2];
      const lag = now_ms - Number(m[3]);
      this.lag_ms.set(iso, Math.min(this.lag_ms.get(iso) ?? Infinity, lag));
      if (this.events.length < GC_EVENTS_MAX) this.events.push({ iso, stamp_ms: Number(m[3]), pause_ms: Number(m[4]) });
      let g = this.isolates.get(iso);
      if (g === undefined) this.isolates.set(iso, g = emptyGc());
      const pause = Number(m[4]);
      const allocated = field(line, 'allocated');
      // One 2026-11-26 run summed ~3.4e15 bytes for an isolate in a phase: a line whose count is
      // not one (an underflowed size, or two lines run together) is left out, and counted.
      if (!(allocated >= 0 && allocated < ALLOCATED_PER_GC_MAX)) {
        this.skipped++;
        continue;
      }
      g.allocated += allocated;
      if (m[5] === 's') {
        g.scavenges++;
        g.scavenge_pause_ms += pause;
        g.promoted += field(line, 'promoted');
      } else {
        g.majors++;
        g.major_pause_ms += pause;
      }
    }
  }

  /** Every isolate's totals so far (copies). */
  snapshot(): Map<string, IsolateGc> {
    return new Map([...this.isolates].map(([k, v]) => [k, { ...v }]));
  }

  /**
   * Every isolate's pauses on the epoch clock (the server's stage stamps' clock): (start ms,
   * duration ms) pairs in start order. An isolate's stamps count from its own start, at 1 ms
   * resolution, and V8 prints a line as its GC ends; the least (arrival - stamp) of the isolate's
   * lines puts that start on this process's clock (a line that reached us at once; V8's stdout
   * is buffered, so most lines arrive later than that). `time_origin_ms`: this process's
   * performance.timeOrigin, the base of the arrival stamps fed in.
   */
  pausesByIsolate(time_origin_ms: number): Map<string, Float64Array> {
    return pausesOnEpoch(this.events, this.lag_ms, time_origin_ms);
  }

  /** The front's isolate: the one whose stamps lag arrival the least (see the file's header). */
  front(): string | null {
    let best: string | null = null;
    for (const [k, v] of this.lag_ms) if (best === null || v < (this.lag_ms.get(best) as number)) best = k;
    return best;
  }
}

/** GC pauses kept for the timeline at most (a 2-minute bench run sees a few thousand). */
export const GC_EVENTS_MAX = 1 << 18;

/** GcTrace.pausesByIsolate over its events and least lags (pure). */
export function pausesOnEpoch(events: readonly { iso: string; stamp_ms: number; pause_ms: number }[], lag_ms: ReadonlyMap<string, number>, time_origin_ms: number): Map<string, Float64Array> {
  const per = new Map<string, number[][]>();
  for (const e of events) {
    const lag = lag_ms.get(e.iso);
    if (lag === undefined) continue;
    const end = time_origin_ms + e.stamp_ms + lag;
    let list = per.get(e.iso);
    if (list === undefined) per.set(e.iso, list = []);
    list.push([end - e.pause_ms, e.pause_ms]);
  }
  const out = new Map<string, Float64Array>();
  for (const [iso, list] of per) {
    list.sort((a, b) => a[0] - b[0]);
    out.set(iso, Float64Array.from(list.flat()));
  }
  return out;
}

/**
 * How well pausesOnEpoch places a trace's pauses: the front's traced pauses against its exact
 * ones (its PerformanceObserver, the stage file), both (start, duration) pairs in start order:
 * the median distance (ms) from each observed pause of at least 1 ms to the nearest traced
 * start; null when either side has none (no --gc, or no stage file).
 */
export function clockCheckMs(observed: Float64Array, traced: Float64Array): number | null {
  const d: number[] = [];
  const m = traced.length / 2;
  if (m === 0) return null;
  for (let k = 0; k < observed.length / 2; k++) {
    if (observed[2 * k + 1] < 1) continue;
    const t = observed[2 * k];
    let lo = 0;
    let hi = m - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (traced[2 * mid] < t) lo = mid + 1;
      else hi = mid;
    }
    let best = Math.abs(traced[2 * lo] - t);
    if (lo > 0) best = Math.min(best, Math.abs(traced[2 * (lo - 1)] - t));
    d.push(best);
  }
  if (d.length === 0) return null;
  return Math.round(medianLowerMiddle(d) * 10) / 10;
}

/** What each isolate did between two snapshots. */
export function gcDelta(a: Map<string, IsolateGc>, b: Map<string, IsolateGc>): Map<string, IsolateGc> {
  const out = new Map<string, IsolateGc>();
  for (const [k, v] of b) {
    const before = a.get(k) ?? emptyGc();
    out.set(k, {
      allocated: v.allocated - before.allocated, promoted: v.promoted - before.promoted,
      scavenges: v.scavenges - before.scavenges, majors: v.majors - before.majors,
      scavenge_pause_ms: v.scavenge_pause_ms - before.scavenge_pause_ms, major_pause_ms: v.major_pause_ms - before.major_pause_ms,
    });
  }
  return out;
}

/** A phase's GC figures per answered request: the front's, and all isolates' together. */
export interface GcFigures {
  front_bytes_per_request: number;
  front_promoted_per_request: number;
  front_scavenges_per_10k: number;
  front_majors_per_10k: number;
  /** The front's GC pauses (its own thread stopped), µs per request: all, and scavenges alone (the major GCs are few and long, so they make the total noisy). */
  front_gc_pause_us_per_request: number;
  front_scavenge_pause_us_per_request: number;
  all_isolates_bytes_per_request: number;
  all_isolates_scavenges_per_10k: number;
}

/**
 * The phase's figures; null when the front is unknown or absent from the phase's delta (no nvp
 * line matched: a server run without --trace-gc-nvp, or a V8 whose format NVP does not read),
 * so a trace that was never read is not reported as a phase without garbage.
 */
export function gcFigures(delta: Map<string, IsolateGc>, front: string | null, answered: number): GcFigures | null {
  const n = Math.max(1, answered);
  const f = front !== null ? delta.get(front) : undefined;
  if (f === undefined) return null;
  let all = 0;
  let all_s = 0;
  for (const v of delta.values()) {
    all += v.allocated;
    all_s += v.scavenges;
  }
  const r = (x: number, d = 1): number => Math.round(x * d) / d;
  return {
    front_bytes_per_request: r(f.allocated / n),
    front_promoted_per_request: r(f.promoted / n),
    front_scavenges_per_10k: r((f.scavenges * 1e4) / n, 100),
    front_majors_per_10k: r((f.majors * 1e4) / n, 100),
    front_gc_pause_us_per_request: r(((f.scavenge_pause_ms + f.major_pause_ms) * 1000) / n, 100),
    front_scavenge_pause_us_per_request: r((f.scavenge_pause_ms * 1000) / n, 100),
    all_isolates_bytes_per_request: r(all / n),
    all_isolates_scavenges_per_10k: r((all_s * 1e4) / n, 100),
  };
}
