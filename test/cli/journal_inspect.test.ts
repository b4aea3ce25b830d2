// `ringbook journal inspect` over a journal of many batches (more than the 50 its text output
// shows in full): its output must be what the copying reader (`Journal.read`) says of every batch,
// now that the command walks the journal with the reused-buffer reader (`Journal.readTransient`).
// The expected rows are built here from `Journal.read`, independently of the command.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../../src/journal/journal.js';
import type { JournalBatch } from '../../src/journal/journal_codec.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import { CONSENT_KIND, CONSENT_KIND_WORD } from '../../src/ring/consent.js';
import { cli } from './run_cli.js';

const BATCHES = 55;
const T0_MS = 1_764_000_000_000;

/** Deterministic pseudo-random words (xorshift32), so a failure is reproducible. */
function wordsOf(seed: number, n: number): Int32Array {
  const out = new Int32Array(n);
  let x = seed | 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x;
  }
  return out;
}

interface Row { batch_id: number; time: string; requests: number; consent_slots: number; bytes: number; input_hash: string }

/** The row `journal inspect` should print for a batch, from the copying reader's batch. */
function rowOf(b: JournalBatch): Row {
  let consent_slots = 0;
  for (let k = 0; k < b.count; k++) if (b.records[k * RECORD_WORDS + CONSENT_KIND_WORD] === CONSENT_KIND) consent_slots++;
  return {
    batch_id: b.batch_id, time: new Date(b.time_ms).toISOString(), requests: b.count - consent_slots,
    consent_slots, bytes: b.bytes, input_hash: b.input_hash,
  };
}

describe('ringbook journal inspect over many batches', () => {
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-inspect-'));
  const journal_dir = path.join(data_dir, 'journal');
  const expected: Row[] = [];

  beforeAll(async () => {
    const journal = Journal.open(journal_dir);
    try {
      for (let b = 1; b <= BATCHES; b++) {
        // Sizes differ per batch (one empty batch), so a reused buffer that kept a larger batch's
        // tail, or a row taken from the wrong batch, shows in the bytes, counts or hashes.
        const count = b === 7 ? 0 : 1 + ((b * 37) % 400);
        const records = wordsOf(b * 2654435761, count * RECORD_WORDS);
        // Every third record a consent slot, the others requests of kind 1.
        for (let k = 0; k < count; k++) records[k * RECORD_WORDS + CONSENT_KIND_WORD] = k % 3 === 2 ? CONSENT_KIND : 1;
        journal.append(b, T0_MS + b * 1000, records, count);
      }
      for (const b of journal.read(1)) {
        expected.push(rowOf(b));
      }
    } finally {
      await journal.close();
    }
  });

  afterAll(() => {
    fs.rmSync(data_dir, { recursive: true, force: true });
  });

  it('--json lists every batch as Journal.read reads it', async () => {
    const r = await cli(['journal', 'inspect', '--data-dir', data_dir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(expected.length).toBe(BATCHES);
    expect(expected.filter((x) => x.consent_slots > 0).length).toBeGreaterThan(40);
    const requests = expected.reduce((s, x) => s + x.requests, 0);
    const bytes = expected.reduce((s, x) => s + x.bytes, 0);
    expect(JSON.parse(r.stdout)).toEqual({
      journal: journal_dir, batches: BATCHES, requests, bytes, first_batch_id: 1, last_batch_id: BATCHES, trimmed_through_batch_id: 0, rows: expected,
    });
  });

  it('the text output is the first and last 20 rows, line for line', async () => {
    const r = await cli(['journal', 'inspect', '--data-dir', data_dir]);
    expect(r.code, r.stderr).toBe(0);
    const line = (x: Row): string =>
      `${String(x.batch_id).padEnd(10)} ${x.time.padEnd(25)} ${String(x.requests).padStart(8)}  ${String(x.bytes).padEnd(9)} ${x.input_hash}`;
    const requests = expected.reduce((s, x) => s + x.requests, 0);
    const bytes = expected.reduce((s, x) => s + x.bytes, 0);
    const want = [
      `journal ${journal_dir}: ${BATCHES} batches, ${requests} requests, ${bytes} bytes`,
      `batches 1..${BATCHES} (none trimmed)`,
      'batch      time                      requests  bytes     input_hash',
      ...expected.slice(0, 20).map(line),
      `... ${BATCHES - 40} more ...`,
      ...expected.slice(-20).map(line),
    ];
    expect(r.stdout).toBe(want.join('\n') + '\n');
  });
});

// A journal trimmed after a snapshot (the matcher calls Journal.trimThrough with the snapshot's
// batch, src/matcher/matcher_worker.ts) no longer holds batch 1: the command starts at the oldest
// batch held and says which batches were trimmed. It used to read from batch 1 and fail with
// "batch 1 missing (next stored is N)".
describe('ringbook journal inspect over a trimmed or empty journal', () => {
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-inspect-trim-'));
  const journal_dir = path.join(data_dir, 'journal');
  const empty_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-inspect-empty-'));
  const TOTAL = 30;
  const TRIMMED = 12;
  const expected: Row[] = [];

  beforeAll(async () => {
    const journal = Journal.open(journal_dir);
    try {
      for (let b = 1; b <= TOTAL; b++) {
        const count = 1 + ((b * 53) % 90);
        const records = wordsOf(b * 40503, count * RECORD_WORDS);
        for (let k = 0; k < count; k++) records[k * RECORD_WORDS + CONSENT_KIND_WORD] = k % 4 === 3 ? CONSENT_KIND : 1;
        journal.append(b, T0_MS + b * 1000, records, count);
      }
      expect(journal.trimThrough(TRIMMED)).toBe(TRIMMED);
      expect(journal.firstBatchId()).toBe(TRIMMED + 1);
      // What is left, read by the copying reader from the first batch held.
      for (const b of journal.read(TRIMMED + 1)) {
        expected.push(rowOf(b));
      }
    } finally {
      await journal.close();
    }
    // An empty journal: opened (created) and closed, never written.
    await Journal.open(path.join(empty_dir, 'journal')).close();
  });

  afterAll(() => {
    fs.rmSync(data_dir, { recursive: true, force: true });
    fs.rmSync(empty_dir, { recursive: true, force: true });
  });

  it('--json starts at the first batch held and names the trimmed ones', async () => {
    const r = await cli(['journal', 'inspect', '--data-dir', data_dir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(expected.map((x) => x.batch_id)).toEqual(Array.from({ length: TOTAL - TRIMMED }, (_, i) => TRIMMED + 1 + i));
    const requests = expected.reduce((s, x) => s + x.requests, 0);
    const bytes = expected.reduce((s, x) => s + x.bytes, 0);
    expect(JSON.parse(r.stdout)).toEqual({
      journal: journal_dir, batches: TOTAL - TRIMMED, requests, bytes,
      first_batch_id: TRIMMED + 1, last_batch_id: TOTAL, trimmed_through_batch_id: TRIMMED, rows: expected,
    });
  });

  it('the text output says where it starts and that earlier batches were trimmed', async () => {
    const r = await cli(['journal', 'inspect', '--data-dir', data_dir]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[1]).toBe(`batches ${TRIMMED + 1}..${TOTAL}; batches 1..${TRIMMED} were trimmed after a snapshot`);
    expect(lines.length).toBe(3 + TOTAL - TRIMMED);
    expect(lines[3].startsWith(String(TRIMMED + 1).padEnd(10) + ' ')).toBe(true);
    expect(lines[lines.length - 1].startsWith(String(TOTAL).padEnd(10) + ' ')).toBe(true);
  });

  it('an empty journal answers empty, in text and --json', async () => {
    const t = await cli(['journal', 'inspect', '--data-dir', empty_dir]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toBe(`journal ${path.join(empty_dir, 'journal')}: empty (no batches stored)\n`);
    const j = await cli(['journal', 'inspect', '--data-dir', empty_dir, '--json']);
    expect(j.code, j.stderr).toBe(0);
    expect(JSON.parse(j.stdout)).toEqual({
      journal: path.join(empty_dir, 'journal'), batches: 0, requests: 0, bytes: 0,
      first_batch_id: null, last_batch_id: null, trimmed_through_batch_id: 0, rows: [],
    });
  });
});
