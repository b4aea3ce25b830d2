// Request groups (POST /orders/batch): the matcher never ends a batch inside a group, so a group's
// requests are applied contiguously in one engine batch even when the batch limit falls inside it.
import { describe, expect, it } from 'vitest';
import { FastEngine } from '../../src/engine/engine.js';
import { Matcher } from '../../src/matcher/matcher.js';
import { emptyRequest, RequestKind } from '../../src/engine/types.js';
import { encodeConsent } from '../../src/ring/consent.js';
import { createRecordRing, viewsOfRing } from '../../src/ring/records.js';
import { RequestWriter } from '../../src/ring/request_records.js';
import { BatchField, EventReader, EventType } from '../../src/ring/event_records.js';
import { standardConfig, USDC } from './generator.js';

function deposit(amount: number) {
  const r = emptyRequest();
  r.kind = RequestKind.DEPOSIT;
  r.asset = USDC;
  r.amount_units = amount;
  return r;
}

/** The request count of each committed batch, in order. */
function batchSizes(events: ReturnType<typeof createRecordRing>): number[] {
  const reader = new EventReader(viewsOfRing(events));
  const sizes: number[] = [];
  const n = events.available();
  for (let i = 0; i < n; i++) {
    const o = events.slotOffset(i);
    if (reader.type(o) === EventType.BATCH_COMMITTED) sizes.push(reader.field(o, BatchField.REQUEST_COUNT));
  }
  events.release(n);
  return sizes;
}

describe('matcher request groups', () => {
  it('extends a batch to the end of a group the batch limit would cut, and not otherwise', () => {
    const requests = createRecordRing(64);
    const events = createRecordRing(1024);
    const writer = new RequestWriter(requests);
    const matcher = new Matcher(new FastEngine(standardConfig()), requests, events, {
      batch_requests_max: 4, accounts_max: 16, now_ms: () => 1_000,
    });
    const address = new Uint8Array(20).fill(7);
    // 3 single requests, then a group of 5 (its first record is the batch's 4th), then 2 singles.
    let seq = 1;
    for (let i = 0; i < 3; i++) expect(writer.tryWrite(seq++, address, 0, deposit(1 + i))).toBe(true);
    for (let k = 0; k < 5; k++) expect(writer.tryWrite(seq++, address, 0, deposit(10 + k), null, null, 4 - k)).toBe(true);
    for (let i = 0; i < 2; i++) expect(writer.tryWrite(seq++, address, 0, deposit(20 + i))).toBe(true);
    writer.flush();
    expect(matcher.runBatch()).toBe(8); // 3 singles + the whole group of 5
    expect(matcher.runBatch()).toBe(2);
    expect(matcher.runBatch()).toBe(0);
    expect(batchSizes(events)).toEqual([8, 2]);
  });

  it('counts a group in requests: their consent slots travel inside it, and the batch ends after the last one\'s', () => {
    const requests = createRecordRing(128);
    const events = createRecordRing(1024);
    const writer = new RequestWriter(requests);
    const matcher = new Matcher(new FastEngine(standardConfig()), requests, events, {
      batch_requests_max: 3, accounts_max: 16, now_ms: () => 1_000,
    });
    const address = new Uint8Array(20).fill(9);
    // A 300-byte message takes two consent slots per request.
    const consent = encodeConsent({ origin: 'user', request: { signature: new Uint8Array(65), message: 'm'.repeat(300) }, payload: null });
    let seq = 1;
    expect(writer.tryWrite(seq++, address, 0, deposit(1), null, consent)).toBe(true); // records 0-2
    for (let k = 0; k < 3; k++) expect(writer.tryWrite(seq++, address, 0, deposit(2 + k), null, consent, 2 - k)).toBe(true); // 3-11
    expect(writer.tryWrite(seq++, address, 0, deposit(9), null, consent)).toBe(true); // 12-14
    writer.flush();
    // The limit (3 records) ends right after the first request's consent slots: the group that
    // follows waits whole for the next batch.
    expect(matcher.runBatch()).toBe(3);
    // Now the limit falls inside the group's first request: the batch runs to the group's end.
    expect(matcher.runBatch()).toBe(9);
    expect(matcher.runBatch()).toBe(3);
    expect(batchSizes(events)).toEqual([3, 9, 3]);
  });

  it('refuses a group too large for the record', () => {
    const writer = new RequestWriter(createRecordRing(4));
    expect(() => writer.tryWrite(1, new Uint8Array(20), 0, deposit(1), null, null, 64)).toThrow(/group too large/);
  });
});
