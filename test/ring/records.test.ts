// The event codec by name: what EventWriter writes under each field name is what a reader gets
// back under the same name (one codec, so the names cannot drift between writer and readers).
import { describe, expect, it } from 'vitest';
import { emptyRequest, RequestKind, type Request } from '../../src/engine/types.js';
import { createRecordRing, RECORD_WORDS, RecordBuffer, viewsOfRing } from '../../src/ring/records.js';
import { RequestReader, RequestWriter } from '../../src/ring/request_records.js';
import {
  AcceptedField, AccountField, BalanceField, BatchField, CreditField, EventCursor, EventReader, EventType, FeesField, FillField, InboxIncludedField, InboxQueuedField, MarketField, OrderUpdateField, ReferralField, ReferralShareField, RejectedField, AgentField,
} from '../../src/ring/event_records.js';
import { EventWriter } from '../../src/ring/event_writer.js';

/** Writes with `write`, then reads every published record back as [type, cursor]. */
function roundTrip(write: (w: EventWriter) => void): { type: number; seq: number; e: EventCursor }[] {
  const ring = createRecordRing(64);
  const w = new EventWriter(ring);
  w.seq = 77;
  write(w);
  w.flush();
  const n = ring.available();
  const reader = new EventReader(viewsOfRing(ring));
  const out: { type: number; seq: number; e: EventCursor }[] = [];
  for (let i = 0; i < n; i++) {
    const e = new EventCursor(reader);
    e.o = ring.slotOffset(i);
    out.push({ type: e.type(), seq: e.seq(), e });
  }
  return out;
}

describe('event records by field name', () => {
  it('every writer method round-trips under its field names', () => {
    const r = emptyRequest();
    Object.assign(r, {
      kind: RequestKind.PLACE, nonce: 9, market: 1, side: 1, order_type: 0, tif: 2, price_units: 2_000_000,
      quantity_units: 300, asset: 2, amount_units: 55, order_id: 41, client_order_id: 'abc-1',
    });
    const got = roundTrip((w) => {
      w.batchBegin(12, 1_700_000_000_123);
      w.current = r;
      w.accepted(RequestKind.PLACE, 5, 1001);
      w.rejected(RequestKind.CANCEL, 5, 7, 3);
      w.fill(88, 1, 1001, 900, 5, 6, 1, 2_000_000, 300, 4, 2);
      w.orderUpdate(1001, 5, 1, 1, 1, 2_000_000, 300, 100, 200, 1_990_000, 2, 400_000, 17);
      w.balance(5, 2, 1234, 567, 3);
      w.account(6, new Uint8Array(20).fill(0xab), 0);
      w.market(1, { status: 1, base_asset: 0, quote_asset: 2, tick_units: 10_000, lot_units: 100, fee_override: 1, maker_fee_bps: -1, taker_fee_bps: 5 });
      w.fees(-2, 7);
      w.credit(5, 1_000_000, 250_000);
      w.referral(5, 6, 99_000);
      w.referralShare(88, 5, 6, 2, 11);
      w.inboxQueued(3, 5, RequestKind.CANCEL, 10, 86_400_000, 0, 4);
      w.inboxIncluded(3, { ...r, account: 5, kind: RequestKind.CANCEL, nonce: 10 });
      w.batchCommitted(12, 1_700_000_000_123, 4);
    });
    expect(got.map((g) => g.type)).toEqual([
      EventType.BATCH_BEGIN, EventType.ACCEPTED, EventType.REJECTED, EventType.FILL, EventType.ORDER_UPDATE,
      EventType.BALANCE, EventType.ACCOUNT, EventType.MARKET, EventType.FEES, EventType.CREDIT, EventType.REFERRAL,
      EventType.REFERRAL_SHARE, EventType.INBOX_QUEUED, EventType.INBOX_INCLUDED, EventType.BATCH_COMMITTED,
    ]);
    expect(got.every((g) => g.seq === 77)).toBe(true);
    const [begin, acc, rej, fill, upd, bal, account, market, fees, credit, referral, share, queued, included, committed] = got.map((g) => g.e);
    expect([begin.field(BatchField.BATCH_ID), begin.field(BatchField.TIME_MS)]).toEqual([12, 1_700_000_000_123]);
    expect([
      acc.field(AcceptedField.KIND), acc.field(AcceptedField.ACCOUNT), acc.field(AcceptedField.ORDER_ID), acc.field(AcceptedField.NONCE),
      acc.field(AcceptedField.MARKET), acc.field(AcceptedField.SIDE), acc.field(AcceptedField.ORDER_TYPE), acc.field(AcceptedField.TIF),
      acc.field(AcceptedField.PRICE_UNITS), acc.field(AcceptedField.QUANTITY_UNITS), acc.field(AcceptedField.ASSET),
      acc.field(AcceptedField.AMOUNT_UNITS), acc.field(AcceptedField.REQUEST_ORDER_ID), acc.clientOrderId(),
    ]).toEqual([RequestKind.PLACE, 5, 1001, 9, 1, 1, 0, 2, 2_000_000, 300, 2, 55, 41, 'abc-1']);
    expect([rej.field(RejectedField.KIND), rej.field(RejectedField.ACCOUNT), rej.field(RejectedField.CODE), rej.field(RejectedField.REASON)])
      .toEqual([RequestKind.CANCEL, 5, 7, 3]);
    expect(Object.values(FillField).map((k) => fill.field(k))).toEqual([88, 1, 1001, 900, 5, 6, 1, 2_000_000, 300, 4, 2]);
    expect(fill.field(FillField.MAKER_FEE_UNITS)).toBe(2);
    expect(Object.values(OrderUpdateField).map((k) => upd.field(k))).toEqual([1001, 5, 1, 1, 1, 2_000_000, 300, 100, 200, 1_990_000, 2, 400_000, 17]);
    expect(upd.field(OrderUpdateField.LAST_FILL_PRICE_UNITS)).toBe(1_990_000);
    expect([upd.field(OrderUpdateField.LOCKED_UNITS), upd.field(OrderUpdateField.PRIORITY_SEQ)]).toEqual([400_000, 17]);
    expect(Object.values(BalanceField).map((k) => bal.field(k))).toEqual([5, 2, 1234, 567, 3]);
    expect([account.field(AccountField.ACCOUNT), account.addressHex()]).toEqual([6, '0x' + 'ab'.repeat(20)]);
    expect([market.field(MarketField.MARKET), market.field(MarketField.STATUS), market.field(MarketField.QUOTE_ASSET),
      market.field(MarketField.TICK_UNITS), market.field(MarketField.LOT_UNITS), market.field(MarketField.FEE_OVERRIDE),
      market.field(MarketField.MAKER_FEE_BPS), market.field(MarketField.TAKER_FEE_BPS)]).toEqual([1, 1, 2, 10_000, 100, 1, -1, 5]);
    expect([fees.field(FeesField.MAKER_FEE_BPS), fees.field(FeesField.TAKER_FEE_BPS)]).toEqual([-2, 7]);
    expect([credit.field(CreditField.ACCOUNT), credit.field(CreditField.CREDIT_LIMIT_UNITS), credit.field(CreditField.AUTO_CANCEL_RATIO_PPM)])
      .toEqual([5, 1_000_000, 250_000]);
    expect([referral.field(ReferralField.REFERRED), referral.field(ReferralField.REFERRER), referral.field(ReferralField.ACTIVE_UNTIL_MS)])
      .toEqual([5, 6, 99_000]);
    expect(Object.values(ReferralShareField).map((k) => share.field(k))).toEqual([88, 5, 6, 2, 11]);
    expect(Object.values(InboxQueuedField).map((k) => queued.field(k))).toEqual([3, 5, RequestKind.CANCEL, 10, 86_400_000, 0, 4]);
    expect(Object.values(InboxIncludedField).map((k) => included.field(k))).toEqual([3, 5, RequestKind.CANCEL, 10]);
    expect([committed.field(BatchField.BATCH_ID), committed.field(BatchField.REQUEST_COUNT)]).toEqual([12, 4]);
  });

  it('field names of one type are distinct indices', () => {
    for (const named of [AcceptedField, FillField, OrderUpdateField, MarketField, InboxQueuedField]) {
      const k = Object.values(named);
      expect(new Set(k).size).toBe(k.length);
    }
  });
});

describe('agent keys in the records', () => {
  const ADDR = new Uint8Array(20).fill(0x11);
  const AGENT = new Uint8Array(20).fill(0xa7);
  /** Writes one request record and reads it back with RequestReader. */
  function requestRoundTrip(r: Request, second: Uint8Array | null, signer: Uint8Array | null): { back: Request; reader: RequestReader; o: number } {
    const ring = createRecordRing(4);
    const w = new RequestWriter(ring);
    expect(w.tryWrite(1, ADDR, 0, r, second, null, 0, signer)).toBe(true);
    w.flush();
    expect(ring.available()).toBe(1);
    const reader = new RequestReader(viewsOfRing(ring));
    const back = emptyRequest();
    reader.read(ring.slotOffset(0), back);
    return { back, reader, o: ring.slotOffset(0) };
  }

  it('the signer rides in words 12..16 of a trading request (all zero: the user signed)', () => {
    const r = Object.assign(emptyRequest(), { kind: RequestKind.PLACE, nonce: 9, price_units: 5, quantity_units: 7 });
    const signed = requestRoundTrip(r, null, AGENT);
    const at = signed.reader.signerByteOffset(signed.o);
    expect(at).toBeGreaterThanOrEqual(0);
    expect([...signed.reader.u8.subarray(at, at + 20)]).toEqual([...AGENT]);
    expect(signed.back).toMatchObject({ nonce: 9, price_units: 5, quantity_units: 7, credit_limit_units: 0, tick_size_units: 0, lot_size_units: 0 });
    const own = requestRoundTrip(r, null, null);
    expect(own.reader.signerByteOffset(own.o)).toBe(-1);
  });

  it('the admin kinds keep their credit limit, tick and lot there, and can carry no signer', () => {
    const credit = Object.assign(emptyRequest(), { kind: RequestKind.SET_CREDIT, credit_limit_units: 123_456_789, auto_cancel_ratio_ppm: 900_000 });
    const back = requestRoundTrip(credit, null, null);
    expect(back.back.credit_limit_units).toBe(123_456_789);
    expect(back.reader.signerByteOffset(back.o)).toBe(-1);
    const add = Object.assign(emptyRequest(), { kind: RequestKind.ADD_MARKET, tick_size_units: 100, lot_size_units: 10_000 });
    expect(requestRoundTrip(add, null, null).back).toMatchObject({ tick_size_units: 100, lot_size_units: 10_000 });
    expect(() => requestRoundTrip(credit, null, AGENT)).toThrow(/signer/);
  });

  it('an approval carries the agent (second address) and its name (words 40..43, at most 16 bytes)', () => {
    const approve = Object.assign(emptyRequest(), { kind: RequestKind.APPROVE_AGENT, nonce: 3, amount_units: 1_800_000_000_000, client_order_id: 'x'.repeat(16) });
    const { back, reader, o } = requestRoundTrip(approve, AGENT, null);
    expect(back).toMatchObject({ kind: RequestKind.APPROVE_AGENT, amount_units: 1_800_000_000_000, client_order_id: 'x'.repeat(16) });
    const at = reader.referrerByteOffset(o);
    expect([...reader.u8.subarray(at, at + 20)]).toEqual([...AGENT]);
    expect(() => requestRoundTrip({ ...approve, client_order_id: 'x'.repeat(17) }, AGENT, null)).toThrow(/agent name/);
  });

  it('the AGENT event round-trips its fields and the name', () => {
    const [agent] = roundTrip((w) => w.agent(4, 9, 1_800_000_000_000, 17, 5, 'quoter-1'));
    expect(agent.type).toBe(EventType.AGENT);
    expect(Object.values(AgentField).map((k) => agent.e.field(k))).toEqual([4, 9, 1_800_000_000_000, 17, 5]);
    expect(agent.e.clientOrderId()).toBe('quoter-1');
  });

  it('an agent-signed request\'s ACCEPTED carries nonce 0 (the agent\'s mark is in its AGENT event)', () => {
    const [own, agents] = [0, 9].map((signer) => roundTrip((w) => {
      w.current = Object.assign(emptyRequest(), { kind: RequestKind.PLACE, nonce: 42, signer });
      w.accepted(RequestKind.PLACE, 4, 1);
    })[0]);
    expect(own.e.field(AcceptedField.NONCE)).toBe(42);
    expect(agents.e.field(AcceptedField.NONCE)).toBe(0);
  });
});

describe('RecordBuffer', () => {
  it('copies whole records out of a ring\'s views, in order, across its growth', () => {
    const ring = createRecordRing(64);
    const from = viewsOfRing(ring);
    for (let i = 0; i < from.i32.length; i++) from.i32[i] = (i * 2654435761) | 0;
    const buf = new RecordBuffer(2); // grows 2 -> 4 -> 8 -> 16
    const picked = [5, 0, 63, 17, 17, 40, 1, 62, 33, 8, 9];
    picked.forEach((slot, k) => expect(buf.push(from, slot * RECORD_WORDS)).toBe(k * RECORD_WORDS));
    expect(buf.count).toBe(picked.length);
    picked.forEach((slot, k) => {
      expect(Array.from(buf.views.i32.subarray(k * RECORD_WORDS, (k + 1) * RECORD_WORDS)))
        .toEqual(Array.from(from.i32.subarray(slot * RECORD_WORDS, (slot + 1) * RECORD_WORDS)));
    });
    buf.clear();
    expect(buf.push(from, 3 * RECORD_WORDS)).toBe(0);
    expect(buf.views.i32[RECORD_WORDS - 1]).toBe(from.i32[4 * RECORD_WORDS - 1]);
  });
});
