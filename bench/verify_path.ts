// The verify stage's per-signature work outside a worker's wake-ups (issue 11, branches h20c and
// h21v), on one thread: the front's write of a task into a verify ring (verify_codec.ts
// encodePackedBatchInto, as verify_lane.ts tryWrite: the answer area, then the packed batch) and
// the worker's check of it (verifyPackedInto: the record's signature and candidates, the EIP-191
// hash, the recovery, the address compare). Items are signed orders in the JSON form
// (bench/verify_cases.ts), signed by keys derived from --seed, so two runs recover the same
// signatures. The front's parser has checked each signature before (signed_body.ts signatureOf,
// in both builds): here the first encode of a signature checks it, and later ones find it checked.
//
// The recovery itself is the secp256k1 library's frames in a callgrind profile; everything else
// is what this bench is for. Instructions per signature: run it under callgrind at two round
// counts and divide the difference by the signatures between them (docs/benchmarks.md, h20c, h21v),
// with V8's seeds fixed (a random hash seed alone moves the start-up by ~10M instructions):
//   valgrind --tool=callgrind node --hash-seed=1 --random-seed=1 --single-threaded dist/bench/verify_path.js --mode cpu --rounds 1
//   valgrind --tool=callgrind node --hash-seed=1 --random-seed=1 --single-threaded dist/bench/verify_path.js --mode cpu --rounds 4
// (add --perf-basic-prof to name the JIT frames). Without --mode cpu: ns of CPU per signature for
// the encode and for the check (process.cpuUsage, median round; a shared core slows it).
//
// Run: npx tsc -p tsconfig.json && node dist/bench/verify_path.js [--dist DIR] [--requests N] [--task N]
//   --dist      a build's dist/ folder (default: this build), e.g. /work/wt/start/dist
//   --requests  signatures per round (default 4,000)
//   --task      signatures per task (default 32)
//   --mode      all (default) or cpu (rounds only, for callgrind)
//   --rounds    timed rounds (default 5)
//   --seed      the signing keys' seed (default 1)
// Ends with one JSON line.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Knobs } from './knobs.js';
import { medianUpperMiddle } from './quantile.js';
import { makeCases } from './verify_cases.js';
import type { SignedMessage } from '../src/auth/verify.js';
import type { Recoverer } from '../src/auth/recover.js';

interface Build {
  encodePackedBatchInto: (bytes: Buffer, at: number, limit: number, items: readonly SignedMessage[], start: number, end: number) => number;
  packedBatchCapacity: (items: readonly SignedMessage[], start: number, end: number) => number;
  verifyPackedInto: (bytes: Uint8Array, batch_at: number, answer_at: number, recoverer: Recoverer) => number;
  recoverer: Recoverer;
}

async function load(dist: string): Promise<Build> {
  const imp = async <T>(p: string): Promise<T> => await import(pathToFileURL(path.join(dist, p)).href) as T;
  const codec = await imp<Omit<Build, 'recoverer'>>('src/auth/verify_codec.js');
  const rec = await imp<{ createRecoverer: () => Recoverer }>('src/auth/recover.js');
  return {
    encodePackedBatchInto: codec.encodePackedBatchInto, packedBatchCapacity: codec.packedBatchCapacity,
    verifyPackedInto: codec.verifyPackedInto, recoverer: rec.createRecoverer(),
  };
}

const DISTINCT = 64;
const TIMES_BYTES = 16;

async function main(): Promise<void> {
  const knobs = new Knobs();
  const n = knobs.number('requests', 4000, 100, 100_000);
  const task = knobs.number('task', 32, 1, 100);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dist = path.resolve(knobs.optionalString('dist') ?? path.resolve(here, '..'));
  const mode = knobs.optionalString('mode') ?? 'all';
  const rounds = knobs.number('rounds', 5, 1, 100);
  const seed = knobs.number('seed', 1, 0, 1_000_000);
  knobs.finish();
  if (mode !== 'all' && mode !== 'cpu') throw new Error('--mode is all or cpu');
  const b = await load(dist);
  const items = makeCases(DISTINCT, seed).map((c) => c.item);
  // The tasks of a round: `task` consecutive items (cycling through the cases), as one lane write each.
  const tasks: SignedMessage[][] = [];
  for (let i = 0; i < n; i += task) {
    const t: SignedMessage[] = [];
    for (let k = i; k < Math.min(n, i + task); k++) t.push(items[k % DISTINCT]);
    tasks.push(t);
  }
  const capacity = Math.max(...tasks.map((t) => b.packedBatchCapacity(t, 0, t.length)));
  const answer_bytes = 8 * Math.ceil((task + TIMES_BYTES) / 8);
  const ring = Buffer.from(new SharedArrayBuffer(answer_bytes + capacity + 8));
  const encode = (t: SignedMessage[]): void => void b.encodePackedBatchInto(ring, answer_bytes, ring.length, t, 0, t.length);
  const check = (t: SignedMessage[]): void => {
    b.verifyPackedInto(ring, answer_bytes, 0, b.recoverer);
    for (let k = 0; k < t.length; k++) if (ring[k] !== 1) throw new Error(`verify_path: signature ${k} refused`);
  };
  const round = (): { encode_ns: number; check_ns: number } => {
    let encode_us = 0;
    let check_us = 0;
    for (const t of tasks) {
      const t0 = process.cpuUsage();
      encode(t);
      const t1 = process.cpuUsage();
      check(t);
      const t2 = process.cpuUsage();
      encode_us += t1.user + t1.system - t0.user - t0.system;
      check_us += t2.user + t2.system - t1.user - t1.system;
    }
    return { encode_ns: (encode_us * 1000) / n, check_ns: (check_us * 1000) / n };
  };
  for (let w = 0; w < 3; w++) round(); // warm-up: compiled code
  if (mode === 'cpu') {
    // Only the work (no clock reads per task): what callgrind counts.
    for (let r = 0; r < rounds; r++) for (const t of tasks) { encode(t); check(t); }
    return void console.log(JSON.stringify({ bench: 'verify_path', mode: 'cpu', rounds, requests: n }));
  }
  const per = Array.from({ length: rounds }, round);
  const encode_ns = Math.round(medianUpperMiddle(per.map((x) => x.encode_ns)));
  const check_ns = Math.round(medianUpperMiddle(per.map((x) => x.check_ns)));
  console.log(`verify_path: ${dist}: ${encode_ns} ns to write and ${check_ns} ns to check a signature (task of ${task}, CPU time)`);
  console.log(JSON.stringify({ bench: 'verify_path', dist, requests: n, task, encode_ns_per_signature: encode_ns, check_ns_per_signature: check_ns }));
}

await main();
