// Referrals and forced inclusions through the whole DA path, on random flows of the engine
// generator (REFER and FORCE_INCLUDE records, batch times that jump hours or months, empty
// batches in which inbox entries fall due):
//   - the operator (the real Matcher via ReplayExecutor) gives roots and state diffs;
//   - the DA worker's path (events packed by EventPacker, read back by PackedFields) gives the
//     same roots, so the packing carries everything the programme leaves read;
//   - an independent Verifier re-executes every published batch and agrees;
//   - the programme leaves built from the engine's canonical state (programme_leaves.ts, what a
//     snapshot restore uses) equal the ones the builder made from events;
//   - a forged inbox leaf in a published state diff is named as the first differing leaf.
import { describe, expect, it } from 'vitest';
import { EventPacker, PackedFields } from '../../src/da/event_packing.js';
import { toHex0x } from '../../src/util/hex.js';
import { keccak256 } from '../../src/da/keccak.js';
import { programmeLeavesOfCanonical } from '../../src/da/programme_leaves.js';
import type { PublishedBatch } from '../../src/da/published.js';
import { ReplayExecutor } from '../../src/da/replay.js';
import { LeafKind, StateRootBuilder, type RawLeaf } from '../../src/da/state_root.js';
import { Verifier } from '../../src/da/verifier.js';
import { RequestKind, type Request } from '../../src/engine/types.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import { EventType } from '../../src/ring/event_records.js';
import { mulberry32 } from '../../src/util/prng.js';
import { RequestGenerator } from '../engine/generator.js';
import { recordsOf, recordable } from './records.js';

const SEEDS = Number(process.env.RINGBOOK_DA_PROGRAMME_SEEDS ?? 30);
const STEPS = 260;
const PROGRAMME_KINDS = new Set<number>([LeafKind.REFERRAL, LeafKind.REFERRAL_EARNED, LeafKind.INBOX_ENTRY]);

interface PlannedBatch {
  time_ms: number;
  requests: Request[];
}

/** The generator's requests cut into batches at its batch times; sometimes an empty batch first. */
function plan(gen: RequestGenerator, seed: number): PlannedBatch[] {
  const random = mulberry32(seed * 104_729);
  const out: PlannedBatch[] = [];
  for (let step = 0; step < STEPS; step++) {
    const t = gen.batch();
    if (t !== null || out.length === 0) {
      const time_ms = t ?? out[out.length - 1].time_ms;
      // An idle exchange whose inbox entry falls due: the matcher starts a batch without requests.
      if (out.length > 0 && random() < 0.3) out.push({ time_ms, requests: [] });
      out.push({ time_ms, requests: [] });
    }
    const r = gen.next();
    // The front refuses client ids longer than a record holds; the engine never sees them.
    if (recordable(r)) out[out.length - 1].requests.push(r);
  }
  return out;
}

function hexLeaves(leaves: Iterable<RawLeaf>): string[] {
  const out: string[] = [];
  for (const l of leaves) if (PROGRAMME_KINDS.has(l.kind)) out.push(`${l.kind}:${toHex0x(l.key)}=${toHex0x(l.value)}`);
  return out.sort();
}

describe('referrals and forced inclusions through the DA path', () => {
  it(`operator, DA worker packing and verifier agree; canonical leaves match (${SEEDS} random flows)`, () => {
    const seen = { refers: 0, forces: 0, queued: 0, included: 0, shares: 0, empty_inclusions: 0, forged: 0, batches: 0 };
    for (let seed = 1; seed <= SEEDS; seed++) {
      const gen = new RequestGenerator(seed);
      const config = gen.config;
      const packer = new EventPacker();
      let included_now = 0;
      const operator = new ReplayExecutor(config, {
        onEvent: (e) => {
          packer.pack(e);
          const type = e.type();
          if (type === EventType.INBOX_QUEUED) seen.queued++;
          else if (type === EventType.INBOX_INCLUDED) included_now++;
          else if (type === EventType.REFERRAL_SHARE) seen.shares++;
        },
      });
      // The DA worker's builder, fed only what the front posts.
      const worker = new StateRootBuilder(config.assets);
      const fields = new PackedFields();
      const deliver = (): string => {
        const msg = packer.take();
        if (msg === null) throw new Error('nothing packed');
        fields.load(msg);
        let root = '';
        for (let i = 0; i < msg.count; i++) {
          fields.i = i;
          worker.apply(fields);
          if (fields.type() === EventType.BATCH_COMMITTED) root = worker.endBatch().state_root;
        }
        return root;
      };
      const genesis = operator.genesis();
      expect(deliver()).toBe(genesis.state_root);
      const verifier = new Verifier(config, { log: () => undefined });
      const forger = new Verifier(config, { log: () => undefined });
      expect(verifier.genesis_root).toBe(genesis.state_root);
      let prev = genesis.state_root;
      let forged_this_seed = false;
      plan(gen, seed).forEach((b, i) => {
        const batch_id = i + 1;
        const records = recordsOf(b.requests);
        for (const r of b.requests) {
          if (r.kind === RequestKind.REFER) seen.refers++;
          if (r.kind === RequestKind.FORCE_INCLUDE) seen.forces++;
        }
        included_now = 0;
        const roots = operator.apply(batch_id, b.time_ms, records, b.requests.length);
        seen.included += included_now;
        if (b.requests.length === 0 && included_now > 0) seen.empty_inclusions++;
        const where = `seed ${seed} batch ${batch_id}`;
        expect(deliver(), `${where}: DA worker root`).toBe(roots.state_root);
        const bytes = new Uint8Array(records.buffer, records.byteOffset, b.requests.length * RECORD_WORDS * 4);
        const published: PublishedBatch = {
          header: {
            batch_id, prev_state_root: prev, state_root: roots.state_root, fills_root: roots.fills_root,
            input_hash: toHex0x(keccak256(bytes)), timestamp: b.time_ms,
          },
          inputs_hex: Buffer.from(bytes).toString('hex'), fills: roots.fills, state_diff: roots.state_diff,
        };
        prev = roots.state_root;
        const verdict = verifier.verify(published);
        expect(verdict.ok, `${where}: ${JSON.stringify(verdict.fraud?.reasons)}`).toBe(true);
        // The forger's copy: one inbox leaf value altered in the published diff (same inputs, so
        // its re-executed state stays on track for the next batches).
        const inbox_change = roots.state_diff.find((c) => c.kind === LeafKind.INBOX_ENTRY && c.value !== null);
        if (!forged_this_seed && inbox_change !== undefined) {
          forged_this_seed = true;
          const v = inbox_change.value!;
          const forged_diff = roots.state_diff.map((c) => (c === inbox_change ? { ...c, value: v.slice(0, -1) + (v.endsWith('0') ? '1' : '0') } : c));
          const fraud = forger.verify({ ...published, state_diff: forged_diff });
          expect(fraud.ok).toBe(false);
          expect(fraud.fraud?.first_differing_leaf?.id).toMatch(/^inbox_entry\/entry_id=\d+$/);
          seen.forged++;
        } else {
          expect(forger.verify(published).ok, `${where}: forger's verifier back on track`).toBe(true);
        }
        seen.batches++;
      });
      // The leaves a snapshot restore would build from the engine's state are the event-built ones;
      // so are the nonce leaves (every nonce use, REFER and FORCE_INCLUDE included, is a leaf).
      const state = operator.engine.canonicalState();
      const canonical = programmeLeavesOfCanonical(state);
      expect(hexLeaves(canonical.map(([, l]) => ({ kind: l.kind, key: l.key, value: l.value! }))), `seed ${seed}: canonical programme leaves`)
        .toEqual(hexLeaves(operator.builder.rawLeaves()));
      const nonces = new Map(operator.builder.leaves().filter((l) => l.kind === 'nonce').map((l) => [l.id, l.fields.nonce]));
      for (const a of state.accounts) {
        if (a.nonce_high_water > 0) expect(nonces.get(`nonce/account=${a.account}`), `seed ${seed}: nonce of ${a.account}`).toBe(a.nonce_high_water);
      }
    }
    // The flows did exercise what this test is about.
    expect(seen.refers).toBeGreaterThan(SEEDS);
    expect(seen.forces).toBeGreaterThan(SEEDS);
    expect(seen.queued).toBeGreaterThan(SEEDS);
    expect(seen.included).toBeGreaterThan(SEEDS / 2);
    expect(seen.shares).toBeGreaterThan(0);
    expect(seen.empty_inclusions).toBeGreaterThan(0);
    expect(seen.forged).toBeGreaterThan(SEEDS / 2);
  });
});
