// A batch without requests: the matcher starts one when a forced-inclusion entry falls due on an
// idle exchange. It goes through the journal, the journal reader, the DA publisher, the LMDB DA
// store (and a reopen), the wire form and the verifier like any other batch, and its root
// differs from the previous one (the entry left the inbox, its order rests).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LmdbDaStore } from '../../src/da/da_store.js';
import { JournalReader } from '../../src/da/journal_reader.js';
import { batchFromJson, batchToJson } from '../../src/da/published.js';
import { DaPublisherCore } from '../../src/da/publisher.js';
import { ReplayExecutor } from '../../src/da/replay.js';
import { LeafKind } from '../../src/da/state_root.js';
import { Verifier } from '../../src/da/verifier.js';
import { Journal } from '../../src/journal/journal.js';
import { decodeBatch, encodeBatch } from '../../src/journal/journal_codec.js';
import { emptyRequest, OrderType, RequestKind, Side, type Request } from '../../src/engine/types.js';
import { BatchField, EventType } from '../../src/ring/event_records.js';
import { ETH, standardConfig, USDC } from '../engine/generator.js';
import { recordsOf } from './records.js';
import { tempDirsPerFile } from '../temp_dirs.js';

/** keccak256 of no bytes: the input hash of a batch without records. */
const EMPTY_INPUT_HASH = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';
const T0 = Date.UTC(2026, 10, 22);

const tempDir = tempDirsPerFile('ringbook-empty-batch-');

function deposit(account: number, asset: number, amount_units: number): Request {
  const r = emptyRequest();
  r.kind = RequestKind.DEPOSIT;
  r.account = account;
  r.asset = asset;
  r.amount_units = amount_units;
  return r;
}

/** A FORCE_INCLUDE of a resting limit bid (envelope nonce 1, payload nonce 2). */
function forcedBid(account: number): Request {
  const r = emptyRequest();
  r.kind = RequestKind.FORCE_INCLUDE;
  r.account = account;
  r.nonce = 1;
  r.inner_kind = RequestKind.PLACE;
  r.inner_nonce = 2;
  r.market = 0;
  r.side = Side.BID;
  r.order_type = OrderType.LIMIT;
  r.price_units = 2_000_000_000;
  r.quantity_units = 100;
  r.client_order_id = 'idle-1';
  return r;
}

describe('a batch with no records', () => {
  it('is journaled, published, stored, served and verified like any other', async () => {
    const dir = tempDir();
    const config = standardConfig();
    const plan = [
      { time_ms: T0, requests: [deposit(1, USDC, 1_000_000_000_000), deposit(1, ETH, 1_000_000), forcedBid(1)] },
      { time_ms: T0 + 1_000, requests: [] },
      { time_ms: T0 + 2_000, requests: [deposit(2, USDC, 5_000_000)] },
    ];
    const journal = Journal.open(path.join(dir, 'journal'));
    for (const [i, b] of plan.entries()) journal.append(i + 1, b.time_ms, recordsOf(b.requests), b.requests.length);
    expect([...journal.read()].map((b) => b.count)).toEqual([3, 0, 1]);
    const codec = decodeBatch(encodeBatch(2, T0, new Int32Array(0), 0), 2);
    expect([codec.count, codec.records.length, codec.input_hash]).toEqual([0, 0, EMPTY_INPUT_HASH]);

    const reader = JournalReader.open(path.join(dir, 'journal'));
    const raw = reader.get(2)!;
    expect([raw.count, raw.inputs.length, raw.input_hash, raw.time_ms]).toEqual([0, 0, EMPTY_INPUT_HASH, T0 + 1_000]);

    const store = LmdbDaStore.open(path.join(dir, 'da'));
    const logs: string[] = [];
    const publisher = new DaPublisherCore({ assets: config.assets, store, journal: reader, log: (m) => logs.push(m) });
    let included_in_empty = 0;
    let batch_time = 0;
    const exec = new ReplayExecutor(config, {
      onEvent: (e) => {
        publisher.onEvent(e);
        if (e.type() === EventType.INBOX_INCLUDED && batch_time === T0 + 1_000) included_in_empty++;
        if (e.type() === EventType.BATCH_COMMITTED) publisher.onBatch(e.field(BatchField.BATCH_ID), e.field(BatchField.TIME_MS));
      },
    });
    exec.genesis();
    for (const b of journal.read()) {
      batch_time = b.time_ms;
      exec.apply(b.batch_id, b.time_ms, b.records, b.count);
    }
    await publisher.settled();
    expect(publisher.failure).toBeNull();
    expect(logs).toEqual([]);
    expect(included_in_empty).toBe(1);
    expect(store.latest()).toBe(3);
    const published = [1, 2, 3].map((id) => store.get(id)!);
    const empty = published[1];
    expect(empty.inputs_hex).toBe('');
    expect(empty.header.input_hash).toBe(EMPTY_INPUT_HASH);
    expect(empty.header.timestamp).toBe(T0 + 1_000);
    expect(empty.header.prev_state_root).toBe(published[0].header.state_root);
    expect(empty.header.state_root).not.toBe(empty.header.prev_state_root);
    // The entry left the inbox and its order rests.
    expect(empty.state_diff?.filter((c) => c.kind === LeafKind.INBOX_ENTRY)).toEqual([{ kind: LeafKind.INBOX_ENTRY, key: '0x0000000000000001', value: null }]);
    expect(empty.state_diff?.some((c) => c.kind === LeafKind.OPEN_ORDER && c.value !== null)).toBe(true);
    expect(batchFromJson(JSON.parse(JSON.stringify(batchToJson(empty))))).toEqual(empty);

    await publisher.close();
    await journal.close();
    const again = LmdbDaStore.open(path.join(dir, 'da'));
    expect(again.get(2)).toEqual(empty);
    await again.close();

    const verifier = new Verifier(config, { log: () => undefined });
    for (const b of published) {
      const v = verifier.verify(b);
      expect(v.ok, JSON.stringify(v.fraud?.reasons)).toBe(true);
    }
    // An "empty" batch that claims a root without the inclusion is fraud.
    const lazy = new Verifier(config, { log: () => undefined });
    expect(lazy.verify(published[0]).ok).toBe(true);
    const forged = lazy.verify({ ...empty, header: { ...empty.header, state_root: empty.header.prev_state_root }, state_diff: [] });
    expect(forged.ok).toBe(false);
    expect(forged.fraud?.first_differing_leaf?.id).toMatch(/^(inbox_entry|open_order|balance|nonce)\//);
  });
});
