// The whole state in the root (docs/verifiability.md, "What the root commits to"): after random
// flows through the real Matcher, changing any one field of the engine's canonical state (a
// balance, a nonce, an order's price, time in force or client id, a counter, a deposit total, a
// referral, an inbox entry, ...) changes the state root built from it. The fields listed in
// DERIVED are the documented exceptions (docs/verifiability.md).
import { describe, expect, it } from 'vitest';
import { leavesFromCanonical } from '../../src/da/canonical_leaves.js';
import { ReplayExecutor } from '../../src/da/replay.js';
import { stateRootOfLeaves } from '../../src/da/state_root.js';
import type { CanonicalState } from '../../src/engine/api.js';
import { addressesHex } from '../../src/snapshot/snapshot_file.js';
import { mulberry32 } from '../../src/util/prng.js';
import { generateSequence } from '../engine/generator.js';
import { recordsOf, recordable } from './records.js';

const SEEDS = 6;
/** Mutations tried per state (a random sample of its fields; every field kind is met over the seeds). */
const MUTATIONS_PER_STATE = 40;
/**
 * Engine fields not in a leaf because they are derivable (docs/verifiability.md says from what):
 * the batch time is the header's timestamp; a market's id is its base and quote's symbols.
 */
const DERIVED = new Set(['batch_time_ms']);

type Path = (string | number)[];

function leafPaths(x: unknown, path: Path, out: Path[]): void {
  if (x === null || x === undefined) return;
  if (Array.isArray(x)) {
    x.forEach((v, i) => leafPaths(v, [...path, i], out));
    return;
  }
  if (typeof x === 'object') {
    for (const [k, v] of Object.entries(x as Record<string, unknown>)) {
      if (DERIVED.has(k)) continue;
      if (path.length === 2 && path[0] === 'markets' && k === 'id') continue; // derived from base/quote
      leafPaths(v, [...path, k], out);
    }
    return;
  }
  out.push(path);
}

/** The field a path names, without its indices: `markets.bids.priority_seq`. */
function kindOf(path: Path): string {
  return path.filter((p) => typeof p === 'string').join('.');
}

function mutated(s: CanonicalState, path: Path): CanonicalState {
  const copy = structuredClone(s) as unknown as Record<string | number, unknown>;
  let at: Record<string | number, unknown> = copy;
  for (let i = 0; i < path.length - 1; i++) at = at[path[i]] as Record<string | number, unknown>;
  const k = path[path.length - 1];
  const v = at[k];
  if (typeof v === 'number') at[k] = v + 1;
  else if (v === 'active') at[k] = 'paused';
  else if (v === 'paused') at[k] = 'active';
  else if (typeof v === 'string') at[k] = v === '' ? 'z' : (v[0] === 'z' ? 'y' : 'z') + v.slice(1);
  else throw new Error(`cannot mutate ${path.join('.')}`);
  return copy as unknown as CanonicalState;
}

function rootOf(s: CanonicalState, addresses: string[], assets: readonly string[]): string {
  const leaves = leavesFromCanonical({ canonical: s, addresses, zero_balance_leaves: [], assets });
  return stateRootOfLeaves(leaves.entries.map(([, l]) => ({ kind: l.kind, key: l.key, value: l.value as Uint8Array })));
}

describe('the root commits to the whole engine state', () => {
  it(`a divergence in any one engine field changes the root (${SEEDS} random flows)`, () => {
    const kinds_seen = new Set<string>();
    let tried = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const g = generateSequence(seed, 300);
      const requests = g.requests.filter(recordable);
      const ex = new ReplayExecutor(g.config, { state_root: false });
      ex.genesis();
      for (let at = 0, b = 1; at < requests.length; at += 5, b++) {
        const n = Math.min(5, requests.length - at);
        ex.apply(b, 1000 * b, recordsOf(requests.slice(at, at + n)), n);
      }
      const s = ex.engine.canonicalState();
      const reg = ex.matcher.registry;
      const bytes = new Uint8Array(reg.size * 20);
      for (let id = 1; id < reg.size; id++) bytes.set(reg.addressBytes(id), id * 20);
      const addresses = addressesHex(bytes);
      const base = rootOf(s, addresses, g.config.assets);
      const paths: Path[] = [];
      leafPaths(s, [], paths);
      const random = mulberry32(seed * 31);
      // A random sample, and the first path of every field kind not tried yet (so a lone field
      // such as a counter is tried for sure, not only when a sample happens to meet it).
      const chosen: Path[] = [];
      for (let i = 0; i < MUTATIONS_PER_STATE && paths.length > 0; i++) chosen.push(paths[Math.floor(random() * paths.length)]);
      const first_of_kind = new Map<string, Path>();
      for (const path of paths) {
        const kind = kindOf(path);
        if (!first_of_kind.has(kind)) first_of_kind.set(kind, path);
      }
      for (const [kind, path] of first_of_kind) if (!kinds_seen.has(kind)) chosen.push(path);
      for (const path of chosen) {
        let root: string;
        try {
          root = rootOf(mutated(s, path), addresses, g.config.assets);
        } catch {
          continue; // a state the leaves cannot even encode shares no root with this one
        }
        expect(root, `seed ${seed}: ${path.join('.')} changed, the root did not`).not.toBe(base);
        kinds_seen.add(kindOf(path));
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(SEEDS * MUTATIONS_PER_STATE / 2);
    for (const k of ['next_order_id', 'next_fill_id', 'deposits_units', 'withdrawals_units', 'accounts.nonce_high_water', 'accounts.balances']) {
      expect([...kinds_seen].some((x) => x === k || x.startsWith(k)), `mutations of ${k} were tried`).toBe(true);
    }
    expect([...kinds_seen].some((x) => x.endsWith('tif') || x.endsWith('client_order_id')), 'order terms were tried').toBe(true);
    for (const k of ['next_priority_seq', 'locked_units', 'priority_seq', 'last_fill_price_units']) {
      expect([...kinds_seen].some((x) => x === k || x.endsWith(`.${k}`)), `mutations of ${k} were tried`).toBe(true);
    }
  });
});
