// The load bench's GC accounting (bench/load/gc_trace.ts) on real `--trace-gc-nvp` output of two
// isolates: test/bench/fixtures/trace_gc_nvp_two_isolates.txt is the stdout of Node 20 running
// a main thread and one worker (the program is in the file's header), cut to a few lines per
// isolate; trace_gc_plain.txt is the same program under plain `--trace-gc`, whose lines the
// parser must not read. What is checked: the per-isolate sums against the fixture's own fields,
// lines split across chunks, the front being the isolate whose stamps lag arrival least, the
// skip rule for an implausible `allocated=`, and null figures when no line was read.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GcTrace, gcDelta, gcFigures } from '../../bench/load/gc_trace.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const NVP_TEXT = fixture('trace_gc_nvp_two_isolates.txt');
const PLAIN_TEXT = fixture('trace_gc_plain.txt');

interface Line { text: string; isolate: string; stamp_ms: number; fields: Map<string, string> }

/** The fixture's GC lines read token by token (not with the parser's regex): `[pid:isolate] T ms: k=v k=v ...`. */
function gcLines(text: string): Line[] {
  const out: Line[] = [];
  for (const line of text.split('\n')) {
    const head = /^\[\d+:(0x[0-9a-f]+)\]\s+([\d.]+) ms: /.exec(line);
    if (head === null) continue;
    const fields = new Map<string, string>();
    for (const tok of line.slice(head[0].length).split(/\s+/)) {
      const eq = tok.indexOf('=');
      if (eq > 0) fields.set(tok.slice(0, eq), tok.slice(eq + 1));
    }
    out.push({ text: line, isolate: head[1], stamp_ms: Number(head[2]), fields });
  }
  return out;
}

const LINES = gcLines(NVP_TEXT);
const ISOLATES = [...new Set(LINES.map((l) => l.isolate))];
// The main isolate, as the fixture's header names it (the thread that started first).
const MAIN = /main isolate \((0x[0-9a-f]+)/.exec(NVP_TEXT)?.[1];
const WORKER = ISOLATES.find((i) => i !== MAIN);

/** Feeds the lines as they would arrive: each isolate's stamps count from its own start (main's first). */
function feedAll(trace: GcTrace, lines: Line[], start_ms: Map<string, number>, chunk_chars = 0): void {
  const t0 = 1_000;
  const stamped = lines.map((l) => ({ text: l.text + '\n', at: t0 + (start_ms.get(l.isolate) ?? 0) + l.stamp_ms }));
  for (const { text, at } of stamped) {
    if (chunk_chars <= 0) trace.feed(text, at);
    else for (let i = 0; i < text.length; i += chunk_chars) trace.feed(text.slice(i, i + chunk_chars), at);
  }
}

function expectedOf(isolate: string): { allocated: number; promoted: number; scavenges: number; majors: number; scavenge_pause_ms: number; major_pause_ms: number } {
  const e = { allocated: 0, promoted: 0, scavenges: 0, majors: 0, scavenge_pause_ms: 0, major_pause_ms: 0 };
  for (const l of LINES.filter((x) => x.isolate === isolate)) {
    const num = (k: string): number => Number(l.fields.get(k));
    e.allocated += num('allocated');
    if (l.fields.get('gc') === 's') {
      e.scavenges++;
      e.scavenge_pause_ms += num('pause');
      e.promoted += num('promoted');
    } else {
      e.majors++;
      e.major_pause_ms += num('pause');
    }
  }
  return e;
}

describe('GcTrace on real --trace-gc-nvp lines of two isolates', () => {
  it('the fixture has what the checks need: two isolates, each with scavenges and a full GC', () => {
    expect(ISOLATES).toHaveLength(2);
    expect(ISOLATES).toContain(MAIN);
    for (const iso of ISOLATES) {
      expect(LINES.filter((l) => l.isolate === iso && l.fields.get('gc') === 's').length).toBeGreaterThanOrEqual(2);
      expect(LINES.filter((l) => l.isolate === iso && l.fields.get('gc') === 'mc').length).toBeGreaterThanOrEqual(1);
    }
    for (const l of LINES) expect(Number(l.fields.get('allocated'))).toBeGreaterThan(0);
  });

  it('sums each isolate\'s fields, also when lines arrive split across chunks', () => {
    const starts = new Map([[MAIN!, 0], [WORKER!, 40]]);
    for (const chunk_chars of [0, 97, 1]) {
      const trace = new GcTrace();
      feedAll(trace, LINES, starts, chunk_chars);
      const snap = trace.snapshot();
      expect([...snap.keys()].sort()).toEqual([...ISOLATES].sort());
      for (const iso of ISOLATES) {
        const got = snap.get(iso)!;
        const want = expectedOf(iso);
        expect(got.allocated, `${iso} chunks of ${chunk_chars}`).toBe(want.allocated);
        expect(got.promoted).toBe(want.promoted);
        expect(got.scavenges).toBe(want.scavenges);
        expect(got.majors).toBe(want.majors);
        expect(got.scavenge_pause_ms).toBeCloseTo(want.scavenge_pause_ms, 9);
        expect(got.major_pause_ms).toBeCloseTo(want.major_pause_ms, 9);
      }
      expect(trace.skipped).toBe(0);
    }
  });

  it('takes as the front the isolate whose stamps lag arrival least (the one started first)', () => {
    const main_first = new GcTrace();
    feedAll(main_first, LINES, new Map([[MAIN!, 0], [WORKER!, 40]]));
    expect(main_first.front()).toBe(MAIN);
    // The rule, not the order of lines: were the worker's clock the older one, it would be the front.
    const worker_first = new GcTrace();
    feedAll(worker_first, LINES, new Map([[MAIN!, 40], [WORKER!, 0]]));
    expect(worker_first.front()).toBe(WORKER);
  });

  it('leaves out and counts a line whose allocated= is implausible, and keeps the others', () => {
    const scavenge = LINES.find((l) => l.isolate === MAIN && l.fields.get('gc') === 's')!;
    const allocated = scavenge.fields.get('allocated')!;
    const bad = [
      scavenge.text.replace(` allocated=${allocated} `, ' allocated=3400000000000000 '), // the 2026-11-26 run's size
      scavenge.text.replace(` allocated=${allocated} `, ' allocated=-4096 '),
    ];
    for (const b of bad) expect(b).not.toBe(scavenge.text);
    const trace = new GcTrace();
    feedAll(trace, LINES, new Map([[MAIN!, 0], [WORKER!, 40]]));
    const before = trace.snapshot();
    for (const b of bad) trace.feed(b + '\n', 1e6);
    expect(trace.skipped).toBe(2);
    expect(trace.snapshot()).toEqual(before);
    // A plausible copy of the same line counts.
    trace.feed(scavenge.text + '\n', 1e6);
    expect(trace.snapshot().get(MAIN!)!.allocated).toBe(before.get(MAIN!)!.allocated + Number(allocated));
    expect(trace.skipped).toBe(2);
  });
});

describe('gcFigures', () => {
  it('per answered request: the front\'s figures and all isolates together, between two snapshots', () => {
    // The first snapshot after three of the worker's lines: the phase then has lines of both isolates.
    const half = 3;
    const trace = new GcTrace();
    const starts = new Map([[MAIN!, 0], [WORKER!, 40]]);
    feedAll(trace, LINES.slice(0, half), starts);
    const a = trace.snapshot();
    feedAll(trace, LINES.slice(half), starts);
    const delta = gcDelta(a, trace.snapshot());
    const later = LINES.slice(half);
    const sum = (iso: string | null, k: string, gc?: string): number => later
      .filter((l) => (iso === null || l.isolate === iso) && (gc === undefined || l.fields.get('gc') === gc))
      .reduce((s, l) => s + Number(l.fields.get(k)), 0);
    const count = (iso: string | null, gc: string): number => later.filter((l) => (iso === null || l.isolate === iso) && l.fields.get('gc') === gc).length;
    const answered = 2_000;
    const g = gcFigures(delta, trace.front(), answered);
    expect(g).not.toBeNull();
    expect(g!.front_bytes_per_request).toBe(Math.round(sum(MAIN!, 'allocated') / answered));
    expect(g!.front_promoted_per_request).toBe(Math.round(sum(MAIN!, 'promoted', 's') / answered));
    expect(g!.front_scavenges_per_10k).toBeCloseTo((count(MAIN!, 's') * 1e4) / answered, 2);
    expect(g!.all_isolates_bytes_per_request).toBe(Math.round(sum(null, 'allocated') / answered));
    expect(g!.all_isolates_scavenges_per_10k).toBeCloseTo((count(null, 's') * 1e4) / answered, 2);
    expect(g!.front_scavenge_pause_us_per_request).toBeCloseTo((sum(MAIN!, 'pause', 's') * 1000) / answered, 2);
  });

  it('is null, not zeros, when no line was read (plain --trace-gc output, or no GC output at all)', () => {
    // The plain format's lines are GC lines too, of the same program: the parser must not read them.
    expect(PLAIN_TEXT).toMatch(/ ms: (Scavenge|Mark-Compact)/);
    const trace = new GcTrace();
    const a = trace.snapshot();
    trace.feed(PLAIN_TEXT, 5_000);
    trace.feed('{"level":30,"msg":"listening on http://127.0.0.1:1234"}\n', 5_001);
    expect(trace.front()).toBeNull();
    expect(trace.skipped).toBe(0);
    expect(gcFigures(gcDelta(a, trace.snapshot()), trace.front(), 1_000)).toBeNull();
    // A front that has no entry in the phase's delta is no figure either.
    expect(gcFigures(new Map(), '0xdeadbeef', 1_000)).toBeNull();
  });
});
