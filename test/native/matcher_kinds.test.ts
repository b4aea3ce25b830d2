// The matcher bench's split of time by kind of request (bench/matcher_kinds.ts and
// native-bench/matcher_book.c --sample-kinds): the kinds follow the flow's rows and events, and
// the C sampler answers with samples of the kinds it was given and refuses a kinds file of the
// wrong length.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderType, RequestKind, Tif } from '../../src/engine/types.js';
import { FLOW_DEFAULTS, benchConfig, generateFlow } from '../../bench/flow.js';
import { writeFlowFile } from '../../bench/flow_file.js';
import { KIND_NAMES, classifyFlow, sampleNativeKinds } from '../../bench/matcher_kinds.js';
import { buildNative, nativeTool } from '../../bench/native.js';

let dir = '';
beforeAll(() => {
  buildNative();
  dir = mkdtempSync(join(tmpdir(), 'ringbook-kinds-'));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kind = (name: (typeof KIND_NAMES)[number]): number => KIND_NAMES.indexOf(name);

describe('time per kind of request (matcher bench)', () => {
  const { flow, stats } = generateFlow({ ...FLOW_DEFAULTS, seed: 7, accounts: 200, prefill_per_market: 150, ops: 20_000 });

  it('classifies every measured row by its request and the fills it made', () => {
    const fk = classifyFlow(flow);
    expect(fk.kinds.length).toBe(20_000);
    expect(fk.rows.reduce((a, b) => a + b, 0)).toBe(20_000);
    // Every fill of the flow belongs to exactly one row's kind.
    expect(fk.fills.reduce((a, b) => a + b, 0)).toBe(stats.measured.fills);
    let amends = 0;
    for (let i = 0; i < fk.kinds.length; i++) {
      const row = flow.setup_end + i;
      const k = fk.kinds[i];
      if (flow.kind[row] === RequestKind.CANCEL) expect(k).toBe(kind('cancel'));
      else if (flow.kind[row] === RequestKind.AMEND) {
        amends++;
        expect([kind('amend, size only'), kind('amend, moves and rests'), kind('amend, moves and crosses')]).toContain(k);
      } else if (flow.order_type[row] === OrderType.MARKET) {
        expect(k).toBe(flow.tif[row] === Tif.FOK ? kind('market FOK') : kind('market IOC'));
      } else if (flow.tif[row] === Tif.IOC) expect(k).toBe(kind('limit IOC'));
    }
    expect(amends).toBe(stats.mix.move + stats.mix.amend_size);
    // Rows that rest or only change size make no fill; crossing kinds make at least their count.
    for (const k of [kind('limit GTC, rests'), kind('cancel'), kind('amend, size only'), kind('amend, moves and rests')]) {
      expect(fk.fills[k]).toBe(0);
    }
    expect(fk.fills[kind('limit GTC, crosses 2+ makers')]).toBeGreaterThanOrEqual(2 * fk.rows[kind('limit GTC, crosses 2+ makers')]);
    expect(fk.fills[kind('amend, moves and crosses')]).toBeGreaterThanOrEqual(fk.rows[kind('amend, moves and crosses')]);
    expect(fk.rows[kind('amend, moves and rests')]).toBeGreaterThan(0);
    expect(fk.rows[kind('amend, size only')]).toBeGreaterThan(0);
  });

  it('the C sampler answers in the kinds it was given and refuses a kinds file of the wrong length', () => {
    const flow_path = join(dir, 'flow.bin');
    writeFlowFile(flow_path, flow, benchConfig());
    const fk = classifyFlow(flow);
    // Every row of one kind: every sample must land there.
    const all_cancel = { ...fk, kinds: new Uint8Array(fk.kinds.length).fill(kind('cancel')) };
    const c = sampleNativeKinds(flow_path, join(dir, 'kinds.bin'), all_cancel, 99);
    expect(c.samples.length).toBe(KIND_NAMES.length);
    expect(c.samples[kind('cancel')]).toBeGreaterThan(0);
    expect(c.samples.reduce((a, b) => a + b, 0)).toBe(c.samples[kind('cancel')]);
    expect(c.cpu_ns[kind('cancel')]).toBeGreaterThan(0);
    expect(c.cpu_ns.reduce((a, b) => a + b, 0)).toBe(c.cpu_ns[kind('cancel')]);
    writeFileSync(join(dir, 'short.bin'), new Uint8Array(10));
    expect(() => execFileSync(nativeTool('matcher_book'), [flow_path, '--sample-kinds', join(dir, 'short.bin')], { stdio: 'pipe' }))
      .toThrow(/one byte per measured row/);
  }, 60_000);
});
