// The client id as words across the rings (src/engine/client_id.ts): RequestReader into a
// WordsRequest against the same record read into a plain Request, and EventWriter's ACCEPTED of a
// WordsRequest against that of a plain Request, byte for byte over slots full of stale bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CLIENT_ID_WORDS, clientIdEquals, clientIdFromString, WordsRequest } from '../../src/engine/client_id.js';
import { emptyRequest, RequestKind, type Request } from '../../src/engine/types.js';
import { bytesOf, createRecordRing, RECORD_WORDS, viewsOfRing } from '../../src/ring/records.js';
import { RequestReader, RequestWriter } from '../../src/ring/request_records.js';
import { EventWriter } from '../../src/ring/event_writer.js';
import { RING_HEADER_WORDS, type SpscRing } from '../../src/ring/spsc_ring.js';

const SLOTS = 16;
/** The request record's client-id length word (request_records.ts RQ_CLIENT_ID_LENGTH_WORD). */
const RQ_CLIENT_ID_LENGTH_WORD = 29;

/** Fills a fresh ring's slots (after its header) with pseudo-random bytes. */
function junk(ring: SpscRing, seed: number): void {
  const u8 = bytesOf(ring);
  let x = seed | 1;
  for (let i = RING_HEADER_WORDS * 4; i < u8.length; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    u8[i] = x & 0xff;
  }
}

const idArb = fc.stringMatching(/^[A-Za-z0-9_-]{0,36}$/);
const nameArb = fc.stringMatching(/^[A-Za-z0-9_-]{0,16}$/);
const kindArb = fc.constantFrom(RequestKind.PLACE, RequestKind.CANCEL, RequestKind.AMEND, RequestKind.APPROVE_AGENT, RequestKind.DEPOSIT);

describe('client ids as words through the request ring', () => {
  it('a WordsRequest reads every field as a plain Request does, its id from the words, over stale slot bytes', () => {
    fc.assert(fc.property(fc.array(fc.tuple(kindArb, idArb, nameArb), { minLength: 1, maxLength: SLOTS * 3 }), fc.integer(), (items, seed) => {
      const ring = createRecordRing(SLOTS);
      junk(ring, seed);
      const writer = new RequestWriter(ring);
      const reader = new RequestReader(viewsOfRing(ring));
      const address = new Uint8Array(20).fill(7);
      const words = new WordsRequest();
      const plain = emptyRequest();
      for (const [kind, id, name] of items) {
        const r = emptyRequest();
        r.kind = kind;
        r.nonce = 5;
        r.client_order_id = kind === RequestKind.APPROVE_AGENT ? name : id;
        expect(writer.tryWrite(1, address, 0, r)).toBe(true);
        writer.flush();
        expect(ring.available()).toBe(1);
        const o = ring.slotOffset(0);
        reader.read(o, plain);
        reader.read(o, words);
        expect(plain.client_order_id).toBe(r.client_order_id);
        for (const k of Object.keys(plain) as (keyof Request)[]) expect(words[k]).toBe(plain[k]);
        const expected = new Int32Array(CLIENT_ID_WORDS);
        clientIdFromString(r.client_order_id, expected, 0);
        expect(clientIdEquals(expected, 0, words.client_id, 0)).toBe(true);
        ring.release(1);
      }
    }), { numRuns: 300 });
  });

  it('a length beyond the field reads as no id, as for a plain Request', () => {
    const ring = createRecordRing(SLOTS);
    junk(ring, 3);
    const writer = new RequestWriter(ring);
    const r = emptyRequest();
    r.kind = RequestKind.PLACE;
    r.client_order_id = 'abc';
    writer.tryWrite(1, new Uint8Array(20), 0, r);
    writer.flush();
    expect(ring.available()).toBe(1);
    const o = ring.slotOffset(0);
    const reader = new RequestReader(viewsOfRing(ring));
    for (const len of [37, -1, 1 << 30]) {
      ring.i32[o + RQ_CLIENT_ID_LENGTH_WORD] = len;
      const words = new WordsRequest();
      const plain = emptyRequest();
      reader.read(o, plain);
      reader.read(o, words);
      expect(plain.client_order_id).toBe('');
      expect(words.client_id[0]).toBe(0);
      expect(words.client_order_id).toBe('');
    }
  });
});

describe('client ids as words into ACCEPTED', () => {
  it('writes the same record bytes for a WordsRequest as for a plain Request, stale bytes after the id kept', () => {
    fc.assert(fc.property(fc.array(idArb, { minLength: 1, maxLength: SLOTS * 2 }), fc.integer(), (ids, seed) => {
      const a = createRecordRing(SLOTS);
      const b = createRecordRing(SLOTS);
      junk(a, seed);
      junk(b, seed);
      const wa = new EventWriter(a);
      const wb = new EventWriter(b);
      for (const id of ids) {
        const plain = emptyRequest();
        plain.kind = RequestKind.PLACE;
        plain.client_order_id = id;
        const words = Object.assign(new WordsRequest(), plain);
        // Words as a record leaves them: the bytes after the id in its last word are stale.
        const last = 1 + (id.length >> 2);
        if ((id.length & 3) !== 0) words.client_id[last] |= ~((1 << ((id.length & 3) * 8)) - 1) & 0x5a5a5a5a;
        words.clientIdWritten();
        wa.current = plain;
        wb.current = words;
        wa.accepted(RequestKind.PLACE, 3, 9);
        wb.accepted(RequestKind.PLACE, 3, 9);
        wa.flush();
        wb.flush();
        expect(a.available()).toBe(1);
        expect(b.available()).toBe(1);
        const oa = a.slotOffset(0);
        const ob = b.slotOffset(0);
        expect(oa).toBe(ob);
        expect(Array.from(b.i32.subarray(ob, ob + RECORD_WORDS))).toEqual(Array.from(a.i32.subarray(oa, oa + RECORD_WORDS)));
        a.release(1);
        b.release(1);
      }
    }), { numRuns: 300 });
  });
});
