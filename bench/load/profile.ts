// Summary of the server's --cpu-prof output: self time per function, per thread, mapped back to
// the TypeScript source (file:line) through the .js.map files tsc writes next to dist/*.js.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

/** The .cpuprofile file as V8 writes it (the fields read here). */
export interface CpuProfileFile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface HotSpot {
  name: string;
  where: string;
  self_ms: number;
  pct: number;
}

export interface ThreadProfile {
  file: string;
  role: string;
  sampled_ms: number;
  idle_ms: number;
  /** Samples inside functions that block (Atomics.wait, a disk sync; the sampler counts blocked wall time). */
  blocked_ms: number;
  blocked: string[];
  /** sampled - idle - blocked: time the thread was really running. */
  busy_ms: number;
  top: HotSpot[];
}

/**
 * Functions that block the thread (Atomics.wait, or a synchronous disk sync): V8's sampler
 * attributes the blocked time to the JS frame that blocked (it is wall time, not CPU), so they are
 * reported apart. waitSync and waitForDataOnce: the ring's spin-then-wait (src/ring/spsc_ring.ts;
 * the second is the matcher's idle sleep); sleepUntilPublished: an idle verify worker
 * (src/auth/verify_worker.ts); atomicsWaitLoop: Piscina's idle worker loop (no longer used by the
 * server, kept for profiles of older builds); finishTxn: lmdb-js's synchronous commit, where the
 * matcher waits for the journal's fdatasync and O_DSYNC meta write (src/journal/journal.ts).
 */
const BLOCKING_FUNCTIONS = new Set(['waitSync', 'waitForDataOnce', 'sleepUntilPublished', 'atomicsWaitLoop', 'finishTxn']);

// ---- source maps (VLQ "mappings", version 3) ----

const B64 = new Map([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].map((c, i) => [c, i] as const));

interface SourceMap {
  sources: string[];
  /** Per generated line: flat [genCol, srcIdx, srcLine, ...] triples, ascending genCol. */
  lines: Int32Array[];
}

function decodeMappings(mappings: string): Int32Array[] {
  const lines: Int32Array[] = [];
  // Source index and line are deltas across the whole string; columns restart on every line.
  // (Source column and name index are not needed here.)
  let src = 0;
  let srcLine = 0;
  for (const lineText of mappings.split(';')) {
    const out: number[] = [];
    let genCol = 0;
    if (lineText.length > 0) {
      for (const seg of lineText.split(',')) {
        const vals: number[] = [];
        let shift = 0;
        let value = 0;
        for (const ch of seg) {
          const d = B64.get(ch);
          if (d === undefined) break;
          value += (d & 31) << shift;
          if (d & 32) shift += 5;
          else {
            vals.push(value & 1 ? -(value >>> 1) : value >>> 1);
            value = 0;
            shift = 0;
          }
        }
        if (vals.length === 0) continue;
        genCol += vals[0];
        if (vals.length >= 4) {
          src += vals[1];
          srcLine += vals[2];
          out.push(genCol, src, srcLine);
        }
      }
    }
    lines.push(Int32Array.from(out));
  }
  return lines;
}

const map_cache = new Map<string, SourceMap | null>();

function loadMap(js_file: string): SourceMap | null {
  if (map_cache.has(js_file)) return map_cache.get(js_file) ?? null;
  let m: SourceMap | null = null;
  try {
    const raw = JSON.parse(readFileSync(js_file + '.map', 'utf8')) as { sources: string[]; mappings: string; sourceRoot?: string };
    const dir = path.dirname(js_file);
    m = { sources: raw.sources.map((s) => path.resolve(dir, raw.sourceRoot ?? '', s)), lines: decodeMappings(raw.mappings) };
  } catch {
    m = null;
  }
  map_cache.set(js_file, m);
  return m;
}

/** `file:line` of a frame, in the TypeScript source when a source map says so. */
export function frameWhere(frame: CallFrame, repo_root: string): string {
  const url = frame.url;
  if (url === '') return '';
  let file = url;
  if (url.startsWith('file://')) {
    try {
      file = fileURLToPath(url);
    } catch {
      file = url;
    }
  }
  const line0 = frame.lineNumber;
  const col0 = frame.columnNumber;
  let where = `${file}:${line0 + 1}`;
  if (file.endsWith('.js') && existsSync(file + '.map')) {
    const m = loadMap(file);
    const segs = m?.lines[line0];
    if (m && segs && segs.length > 0) {
      let best = -1;
      for (let i = 0; i < segs.length; i += 3) {
        if (segs[i] <= col0) best = i;
        else break;
      }
      if (best < 0) best = 0;
      where = `${m.sources[segs[best + 1]]}:${segs[best + 2] + 1}`;
    }
  }
  if (where.startsWith(repo_root + path.sep)) where = where.slice(repo_root.length + 1);
  const nm = where.indexOf('node_modules/');
  if (nm >= 0) where = where.slice(nm);
  return where;
}

function roleOf(p: CpuProfileFile): string {
  let matcher = false;
  let verify = false;
  let main = false;
  for (const n of p.nodes) {
    const u = n.callFrame.url;
    if (u.includes('matcher_worker')) matcher = true;
    else if (u.includes('verify_worker')) verify = true;
    else if (u.includes('/gateway/') || u.endsWith('/main.js')) main = true;
  }
  if (matcher) return 'matcher thread';
  if (verify) return 'verify worker';
  if (main) return 'main (front: uWS + gateway)';
  return 'other';
}

export function summarizeProfile(file: string, repo_root: string, top_n = 12): ThreadProfile {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfileFile;
  const self = new Map<number, number>(); // node id -> us
  if (p.samples && p.timeDeltas && p.samples.length === p.timeDeltas.length) {
    // timeDeltas[i] is the time before sample i; attribute the time after it (next delta) to it.
    for (let i = 0; i < p.samples.length; i++) {
      const dt = i + 1 < p.timeDeltas.length ? p.timeDeltas[i + 1] : 0;
      self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + Math.max(0, dt));
    }
  } else {
    const total_hits = p.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0);
    const interval = total_hits > 0 ? (p.endTime - p.startTime) / total_hits : 0;
    for (const n of p.nodes) self.set(n.id, (n.hitCount ?? 0) * interval);
  }
  const groups = new Map<string, HotSpot>();
  let sampled = 0;
  let idle = 0;
  let blocked = 0;
  const blocked_names = new Set<string>();
  for (const n of p.nodes) {
    const us = self.get(n.id) ?? 0;
    if (us === 0) continue;
    sampled += us;
    const fn = n.callFrame.functionName || '(anonymous)';
    if (fn === '(idle)') {
      idle += us;
      continue;
    }
    const where = frameWhere(n.callFrame, repo_root);
    if (BLOCKING_FUNCTIONS.has(fn)) {
      blocked += us;
      blocked_names.add(`${fn} ${where}`);
      continue;
    }
    const key = `${fn}@${where}`;
    const g = groups.get(key);
    if (g) g.self_ms += us / 1000;
    else groups.set(key, { name: fn, where, self_ms: us / 1000, pct: 0 });
  }
  const busy = sampled - idle - blocked;
  const top = [...groups.values()].sort((a, b) => b.self_ms - a.self_ms).slice(0, top_n);
  for (const h of top) h.pct = busy > 0 ? (100 * h.self_ms * 1000) / busy : 0;
  return {
    file: path.basename(file), role: roleOf(p), sampled_ms: sampled / 1000, idle_ms: idle / 1000,
    blocked_ms: blocked / 1000, blocked: [...blocked_names], busy_ms: busy / 1000, top,
  };
}

export function summarizeProfileDir(dir: string, repo_root: string, top_n = 12): ThreadProfile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .map((f) => summarizeProfile(path.join(dir, f), repo_root, top_n));
}
