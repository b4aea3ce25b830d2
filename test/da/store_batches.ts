// Made-up published batches for the DA store tests (da_store.test.ts, da_store_failure.test.ts).
import { EMPTY_FILLS_ROOT, type FillLeaf } from '../../src/da/fills_tree.js';
import type { PublishedBatch } from '../../src/da/published.js';
import { RECORD_WORDS } from '../../src/ring/records.js';

export const H = (n: number): string => '0x' + n.toString(16).padStart(64, '0');

export function fill(batch_id: number, fill_id: number, taker: number, maker: number): FillLeaf {
  return {
    batch_id, fill_id, taker_order_id: taker, maker_order_id: maker, taker: '0x' + '11'.repeat(20), maker: '0x' + '22'.repeat(20),
    market_id: 'ETH-USDC', taker_side: 'bid', price: 2_000_000_000, quantity: 100, taker_fee: 5, maker_fee: -1,
  };
}

export function batch(id: number, fills: FillLeaf[] = []): PublishedBatch {
  return {
    header: { batch_id: id, prev_state_root: H(id - 1), state_root: H(id), fills_root: EMPTY_FILLS_ROOT, input_hash: H(1000 + id), timestamp: 1_700_000_000_000 + id },
    inputs_hex: 'ab'.repeat(RECORD_WORDS * 4),
    fills,
    state_diff: [{ kind: 1, key: '0x000000010002', value: '0x' + '00'.repeat(16) }],
  };
}
