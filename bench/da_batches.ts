// A lone order's DA batch as the DA worker submits it at ~1 request per journal batch (two request
// records as inputs, `diff_bytes` of state diff, no fills): the DA-store benches' one shape
// (bench/da_store_commit.ts, bench/journal_paced_da.ts), written once.
import type { PublishedBatch } from '../src/da/published.js';
import { RECORD_WORDS } from '../src/ring/records.js';

/** Batch `id` with `diff_bytes` of state diff (~400: ~10 changed leaves of one order). */
export function daBatch(id: number, diff_bytes: number): PublishedBatch {
  const hex = (n: number): string => '0x' + n.toString(16).padStart(64, '0');
  const diff = new Uint8Array(diff_bytes);
  for (let i = 0; i < diff.length; i++) diff[i] = (id * 31 + i) & 0xff;
  return {
    header: { batch_id: id, prev_state_root: hex(id - 1), state_root: hex(id), fills_root: hex(0), input_hash: hex(id * 7), timestamp: 1_764_000_000_000 + id },
    inputs_hex: 'ab'.repeat(2 * RECORD_WORDS * 4),
    fills: [],
    state_diff_bytes: diff,
  };
}
