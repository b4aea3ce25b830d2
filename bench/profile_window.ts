// Re-cuts a server front's --cpu-prof to the phase windows a bench recorded beside it (issue 11,
// h27h): bench/load.ts --profile and bench/light_ab.ts --profile-dir write `windows.json` into the
// profile dir (bench/load/profile_window.ts). Prints each phase's top functions in µs per request.
//
//   node dist/bench/profile_window.js --dir D [--top N (default 40)] [--by self|total (default self)]
//     [--match TEXT: only functions whose name or file:line contains TEXT]
// Ends with ONE JSON line {"bench":"profile_window",...}.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Knobs } from './knobs.js';
import { cutProfile, perRequestText, type PhaseWindow } from './load/profile_window.js';

function main(): void {
  const knobs = new Knobs();
  const dir = knobs.optionalString('dir');
  if (dir === undefined) throw new RangeError('--dir D: a profile dir with windows.json');
  const top = knobs.number('top', 40, 1, 1000);
  const by = knobs.optionalString('by') ?? 'self';
  if (by !== 'self' && by !== 'total') throw new RangeError(`--by takes self or total, got ${by}`);
  const match = knobs.optionalString('match');
  const repo_root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const w = JSON.parse(readFileSync(path.join(dir, 'windows.json'), 'utf8')) as { front: string; epoch_minus_monotonic_ms: number; phases: PhaseWindow[] };
  const out: Record<string, number> = {};
  for (const ph of w.phases) {
    const cut = cutProfile(path.join(dir, w.front), ph.windows, w.epoch_minus_monotonic_ms, repo_root);
    if (match !== undefined) cut.rows = cut.rows.filter((r) => r.name.includes(match) || r.where.includes(match));
    console.log(`${ph.label} (${ph.requests} requests; µs per request, self and inclusive):`);
    for (const line of perRequestText(cut, ph.requests, top, by === 'self' ? 'self_us' : 'total_us')) console.log(`  ${line}`);
    out[ph.label] = Math.round((cut.busy_us / Math.max(1, ph.requests)) * 100) / 100;
  }
  console.log(JSON.stringify({ bench: 'profile_window', dir, busy_us_per_request: out }));
}

main();
