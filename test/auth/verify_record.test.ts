// The verify record since branch h21v (verify_codec.ts): the signature's 65 bytes and the expected
// address's 20 bytes go in as bytes (from signature_rows.ts and address_rows.ts, the front's caches
// of decoded texts), the message at the word alignment of its hash input. Each refusal must stay
// the one the worker's own parse of the texts gave (verdict 0, neighbours untouched), and every
// verdict must be verifySignedMessage's, whatever the caches held before and wherever the batch lies.
import { describe, expect, it } from 'vitest';
import { eip191Hash, eip191HashBytes, eip191HashWordsInto, eip191WordAlignment } from '../../src/auth/eip191.js';
import { addressRowOf, ADDRESS_ROWS_BYTES } from '../../src/auth/address_rows.js';
import { createRecoverer } from '../../src/auth/recover.js';
import { addressFromPrivateKey, signHash } from '../../src/auth/sign.js';
import { checkSignatureHex, SIGNATURE_IN_ROW, SIGNATURE_ROWS_BYTES, signatureRowOf } from '../../src/auth/signature_rows.js';
import { verifySignedMessage, type SignedMessage } from '../../src/auth/verify.js';
import {
  encodePackedBatch, encodePackedBatchInto, packedBatchCapacity, RECORD, splitTaskAnswer, TASK_TIMES_BYTES, verifyPackedBatch, verifyPackedInto,
} from '../../src/auth/verify_codec.js';
import { Rng } from '../../src/util/prng.js';
import { hex } from './vectors.js';

const r = createRecoverer();
const KEYS = Array.from({ length: 8 }, (_, i) => '0x' + (i + 1).toString(16).padStart(2, '0').repeat(32));
const ADDRS = KEYS.map(addressFromPrivateKey);

function signed(k: number, message: string): SignedMessage {
  return { message, signature_hex: hex(signHash(KEYS[k], eip191Hash(message))), expected_address: ADDRS[k] };
}

const verdictsOf = (items: SignedMessage[]): number[] =>
  Array.from(splitTaskAnswer(verifyPackedBatch(encodePackedBatch(items, 0, items.length), r)).verdicts);
const reference = (items: SignedMessage[]): number[] => items.map((it) => (verifySignedMessage(it, r) ? 1 : 0));

describe('the verify record carries the signature and the address as bytes', () => {
  it('lays out one item: flag, the signature bytes at 3, the message bounds, the address bytes at 76', () => {
    const item = signed(0, 'ringbook:order:ETH-USDC:bid:2000000000:500000:7');
    const bytes = new Uint8Array(encodePackedBatch([item], 0, 1));
    const rec = 4;
    expect(new Uint32Array(bytes.buffer, 0, 1)[0]).toBe(1);
    expect(RECORD).toBe(96);
    expect(bytes[rec]).toBe(1); // flag
    expect(bytes[rec + 1]).toBe(0); // no other candidates
    expect(hex(bytes.subarray(rec + 3, rec + 68))).toBe(item.signature_hex);
    expect(hex(bytes.subarray(rec + 76, rec + 96))).toBe(item.expected_address);
    const u32 = (at: number): number => new DataView(bytes.buffer).getUint32(at, true);
    const messages = rec + RECORD;
    const start = messages + u32(rec + 68);
    const end = messages + u32(rec + 72);
    expect(Buffer.from(bytes.subarray(start, end)).toString('utf8')).toBe(item.message);
    // An ASCII message sits where its hash input wants it (modulo 4): moved by words.
    expect(start & 3).toBe(eip191WordAlignment(item.message.length));
    expect(verdictsOf([item])).toEqual([1]);
  });

  it('refuses hostile and malformed signatures (short, long, no 0x, non-hex, non-ASCII, not a string) as the worker did, neighbours kept', () => {
    const good = signed(1, '{"market_id":"BTC-USDC","side":"ask","price":1,"quantity":2,"nonce":3}');
    const sig = good.signature_hex;
    const at = (i: number, c: string): string => sig.slice(0, i) + c + sig.slice(i + 1);
    const bad: unknown[] = [
      '', '0x', sig.slice(0, 131), sig.slice(0, 130), sig + '0', sig + '00', sig.slice(2), '0X' + sig.slice(2), 'xx' + sig.slice(2),
      ' ' + sig.slice(1), sig.slice(0, 131) + '\n', '0x' + 'zz'.repeat(65), '0x' + 'g'.repeat(130),
      5, null, undefined, {}, ['0x'], new String(sig),
    ];
    for (const i of [0, 1, 2, 3, 5, 66, 130, 131]) {
      for (const c of ['g', 'G', ' ', '\u0130', '\u0161', '\uff10', '\ud800', 'é']) bad.push(at(i, c));
    }
    const items: SignedMessage[] = [good];
    for (const b of bad) items.push({ ...good, signature_hex: b as string }, good);
    const want = reference(items);
    expect(want.filter((v) => v === 1).length).toBe(bad.length + 1);
    expect(verdictsOf(items)).toEqual(want);
    // The refusals happen on the front: the flag stays 0.
    const bytes = new Uint8Array(encodePackedBatch(items, 0, items.length));
    for (let k = 0; k < items.length; k++) expect(bytes[4 + k * RECORD], `item ${k}`).toBe(k % 2 === 0 ? 1 : 0);
  });

  it('answers each v value as verifySignedMessage does: 27/28 and 0/1 accepted, anything else refused', () => {
    const items: SignedMessage[] = [];
    for (let k = 0; k < 4; k++) {
      const base = signed(k, `ringbook:cancel::mm-quote-${k}:10`);
      const bytes = Buffer.from(base.signature_hex.slice(2), 'hex');
      const v = bytes[64];
      for (const nv of [v, v - 27, 26, 29, 2, 3, 35, 36, 37, 38, 255, v === 27 ? 28 : 27, v === 27 ? 1 : 0]) {
        const b = Uint8Array.from(bytes);
        b[64] = nv & 255;
        items.push({ ...base, signature_hex: hex(b) });
      }
    }
    const want = reference(items);
    expect(want.filter((v) => v === 1).length).toBe(8); // the signature's own v, as 27/28 and as 0/1
    expect(verdictsOf(items)).toEqual(want);
  });

  it('refuses wrong address lengths, prefixes and non-hex; accepts either case', () => {
    const good = signed(2, 'Ringbook Exchange\nNonce: 1');
    const a = good.expected_address;
    const bad = ['', a.slice(0, 41), a + '0', a.slice(2), '0X' + a.slice(2), a.slice(0, 41) + 'g', a.slice(0, 10) + '\u0130' + a.slice(11), a.slice(0, 41) + 'é', 42, null];
    const items: SignedMessage[] = [good, { ...good, expected_address: a.toUpperCase().replace('0X', '0x') }];
    for (const b of bad) items.push({ ...good, expected_address: b as string });
    const want = reference(items);
    expect(want.slice(0, 2)).toEqual([1, 1]);
    expect(want.slice(2).every((v) => v === 0)).toBe(true);
    expect(verdictsOf(items)).toEqual(want);
  });

  it('keeps the right bytes whatever the caches held: row collisions, texts checked and not, in any order', () => {
    const rng = new Rng(21);
    const items: SignedMessage[] = [];
    for (let i = 0; i < 600; i++) {
      const k = rng.int(0, KEYS.length - 1);
      const item = signed(k, `ringbook:order:ETH-USDC:bid:${2_000_000_000 + i}:500000:${i}`);
      // Some checked by the parsers' check first (the server's order), some never.
      if (rng.int(0, 1) === 0) expect(checkSignatureHex(item.signature_hex)).toBe(true);
      // Wrong expected address for a few: the address's own row must not leak into another's.
      items.push(rng.int(0, 9) === 0 ? { ...item, expected_address: ADDRS[(k + 1) % ADDRS.length] } : item);
    }
    // Many distinct texts sharing rows (the caches hold 4,096 signatures and 1,024 addresses).
    const fill = (n: number): void => {
      for (let i = 0; i < n; i++) {
        const b = Buffer.alloc(65, i & 255);
        b.writeUInt32BE(i * 2654435761 >>> 0, 0);
        checkSignatureHex(hex(b));
        addressRowOf('0x' + (i * 40503 >>> 0).toString(16).padStart(8, '0').repeat(5));
      }
    };
    fill(5000);
    const want = reference(items);
    expect(verdictsOf(items)).toEqual(want);
    fill(5000);
    expect(verdictsOf(items.slice().reverse())).toEqual(want.slice().reverse());
    // A mixed-case twin of a cached text is its own key: its row holds the same bytes.
    const s = items[0].signature_hex;
    const twin = '0x' + s.slice(2).toUpperCase();
    const row = signatureRowOf(twin);
    expect(row).toBeGreaterThanOrEqual(0);
    expect(hex(SIGNATURE_ROWS_BYTES.subarray(68 * row + SIGNATURE_IN_ROW, 68 * row + SIGNATURE_IN_ROW + 65))).toBe(s.toLowerCase());
    const arow = addressRowOf(ADDRS[3].toUpperCase().replace('0X', '0x'));
    expect(hex(ADDRESS_ROWS_BYTES.subarray(20 * arow, 20 * arow + 20))).toBe(ADDRS[3]);
  });

  it('hashes every message length and alignment right: digits of 1 to 4, non-ASCII (the byte path), empty', () => {
    const items: SignedMessage[] = [];
    const lengths = [0, 1, 2, 3, 4, 5, 9, 10, 11, 99, 100, 101, 102, 103, 135, 136, 137, 200, 999, 1000, 1001, 1023, 1024, 1500];
    for (const n of lengths) items.push(signed(n % KEYS.length, 'm'.repeat(n)));
    for (const m of ['é', 'Nonce: é😀 ünïcödé', '😀'.repeat(30), 'a'.repeat(98) + 'é', '\ud800x']) items.push(signed(4, m));
    const want = reference(items);
    expect(want.every((v) => v === 1)).toBe(true);
    expect(verdictsOf(items)).toEqual(want);
    // Shifted by one item each time: every message lands at another offset.
    for (let shift = 1; shift < 4; shift++) {
      const shifted = [signed(5, 'x'.repeat(shift)), ...items];
      expect(verdictsOf(shifted)).toEqual([1, ...want]);
    }
  });

  it('gives the same verdicts in a buffer that is not word-aligned (the byte paths)', () => {
    const items = [signed(0, 'a'), signed(1, 'ringbook:order:x'), { ...signed(2, 'b'), expected_address: ADDRS[3] }, signed(3, 'é'.repeat(50))];
    const want = reference(items);
    const capacity = packedBatchCapacity(items, 0, items.length);
    const answer = 8 * Math.ceil((items.length + TASK_TIMES_BYTES) / 8);
    for (const offset of [1, 2, 3]) {
      const buf = Buffer.from(new ArrayBuffer(offset + answer + capacity + 8), offset);
      encodePackedBatchInto(buf, answer, buf.length, items, 0, items.length);
      verifyPackedInto(buf, answer, 0, r);
      expect(Array.from(buf.subarray(0, items.length)), `offset ${offset}`).toEqual(want);
    }
  });
});

describe('eip191HashWordsInto', () => {
  it('equals eip191HashBytes for every start offset and length, on the word path and off it', () => {
    const rng = new Rng(22);
    const bytes = new Uint8Array(4096 + 64);
    for (let i = 0; i < bytes.length; i++) bytes[i] = rng.int(0, 255);
    const words = new Int32Array(bytes.buffer);
    const out = new Uint8Array(32);
    for (const n of [0, 1, 3, 9, 10, 64, 99, 100, 135, 136, 170, 300, 999, 1000, 1023, 1024, 2000]) {
      for (let start = 4; start < 12; start++) {
        out.fill(0);
        eip191HashWordsInto(words, bytes, start, start + n, out);
        expect(hex(out), `${n} at ${start}`).toBe(hex(eip191HashBytes(bytes.slice(start, start + n))));
      }
    }
    // A range whose last word lies past the view: the byte path, same digest.
    const short = new Int32Array(bytes.buffer, 0, 10);
    eip191HashWordsInto(short, bytes, 29, 100, out);
    expect(hex(out)).toBe(hex(eip191HashBytes(bytes.slice(29, 100))));
  });
});
