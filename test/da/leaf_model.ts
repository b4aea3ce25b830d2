// An independent model of the state leaves, written from docs/verifiability.md's table with
// DataView (not the builder's encoders): leaves straight from events, the root from scratch.
import { keccak_256 } from '@noble/hashes/sha3.js';
import type { EventFields } from '../../src/ring/event_records.js';
import { EventType } from '../../src/ring/event_records.js';

function be(...parts: [string, number | string][]): Uint8Array {
  const width = (t: string): number =>
    t === 'ascii36' ? 37 : ({ u8: 1, u16: 2, u32: 4, i32: 4, u64: 8, i64: 8, addr: 20 } as Record<string, number>)[t];
  const size = parts.reduce((s, [t]) => s + width(t), 0);
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  let o = 0;
  for (const [t, v] of parts) {
    if (t === 'u8') dv.setUint8(o, v as number), (o += 1);
    else if (t === 'u16') dv.setUint16(o, v as number), (o += 2);
    else if (t === 'u32') dv.setUint32(o, v as number), (o += 4);
    else if (t === 'i32') dv.setInt32(o, v as number), (o += 4);
    else if (t === 'u64') dv.setBigUint64(o, BigInt(v)), (o += 8);
    else if (t === 'i64') dv.setBigInt64(o, BigInt(v)), (o += 8);
    else if (t === 'ascii36') {
      // length byte, then the chars, zero-padded to 36
      const text = v as string;
      dv.setUint8(o, text.length);
      for (let i = 0; i < text.length; i++) dv.setUint8(o + 1 + i, text.charCodeAt(i));
      o += 37;
    } else {
      out.set(Buffer.from((v as string).slice(2), 'hex'), o);
      o += 20;
    }
  }
  return out;
}

export class Model {
  leaves = new Map<string, { kind: number; key: Uint8Array; value: Uint8Array }>();
  markets = new Map<number, number[]>();
  mark = new Map<number, number>();
  time = 0;
  earned = new Map<string, number>();
  /** The last FORCE_INCLUDE ACCEPTED: [fields 0..12], client id. */
  force: { f: number[]; coid: string } | null = null;
  /** Doc: counters leaf 0x0d = next order id, next fill id, next inbox entry id, next priority (from 1). */
  counters = [1, 1, 1, 1];
  /** Doc: supply leaf 0x0e per asset = lifetime deposits, withdrawals. */
  supply = new Map<number, [number, number]>();
  countersLeaf(): void {
    this.put(13, new Uint8Array(0), be(['u64', this.counters[0]], ['u64', this.counters[1]], ['u64', this.counters[2]], ['u64', this.counters[3]]));
  }
  put(kind: number, key: Uint8Array, value: Uint8Array | null): void {
    const id = kind + ':' + Buffer.from(key).toString('hex');
    if (value === null) this.leaves.delete(id);
    else this.leaves.set(id, { kind, key, value });
  }
  marketLeaf(m: number): void {
    const f = this.markets.get(m)!;
    this.put(5, be(['u16', m]), be(['u8', f[1]], ['u16', f[2]], ['u16', f[3]], ['u64', f[4]], ['u64', f[5]], ['u8', f[6]], ['i32', f[7]], ['i32', f[8]], ['u64', this.mark.get(m) ?? 0]));
  }
  apply(e: EventFields): void {
    const f = (k: number): number => e.field(k);
    switch (e.type()) {
      case EventType.BALANCE: return this.put(1, be(['u32', f(0)], ['u16', f(1)]), be(['u64', f(2)], ['u64', f(3)]));
      case EventType.BATCH_BEGIN:
        this.time = f(1);
        return;
      case EventType.ACCEPTED:
        // Doc: an on-chain deposit (nonce = its contract deposit id) writes leaf 0x11, empty key, u64.
        if (f(0) === 1 && f(3) > 0) this.put(17, new Uint8Array(0), be(['u64', f(3)]));
        if (f(0) === 3) {
          // Doc: an order's terms leaf 0x0f = order type u8, tif u8, client id (length + 36 bytes).
          this.counters[0] = f(2) + 1;
          this.countersLeaf();
          this.put(15, be(['u64', f(2)]), be(['u8', f(6)], ['u8', f(7)], ['ascii36', e.clientOrderId()]));
        } else if (f(0) === 13) {
          this.counters[2] = f(2) + 1;
          this.countersLeaf();
        } else if (f(0) === 1 || f(0) === 2) {
          const s = this.supply.get(f(10)) ?? [0, 0];
          s[f(0) - 1] += f(11);
          this.supply.set(f(10), s);
          this.put(14, be(['u16', f(10)]), be(['u64', s[0]], ['u64', s[1]]));
        }
        if (![2, 3, 4, 5, 6, 12, 13, 17, 18].includes(f(0))) return;
        // Doc: an agent-signed request's ACCEPTED carries nonce 0 (its mark is in the AGENT event).
        if (f(3) === 0) return;
        // Doc: a force-include envelope sets the account's envelope_nonce leaf (0x0c), its own
        // sequence; every other signed kind the nonce leaf (0x02).
        this.put(f(0) === 13 ? 12 : 2, be(['u32', f(1)]), be(['u64', f(3)]));
        if (f(0) === 2) this.put(8, be(['u32', f(1)], ['u64', f(3)]), be(['u16', f(10)], ['u64', f(11)]));
        if (f(0) === 13) this.force = { f: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map(f), coid: e.clientOrderId() };
        return;
      case EventType.AGENT: {
        // Doc: agent leaf 0x12 = key user u32, agent u32; value valid_until u64, nonce u64, name
        // (length u8 + 16 bytes); removed at valid_until 0. Floor leaf 0x13 = key user, u64, once > 0.
        if (f(4) > 0) this.put(19, be(['u32', f(0)]), be(['u64', f(4)]));
        let value: Uint8Array | null = null;
        if (f(2) !== 0) {
          value = new Uint8Array(33);
          const dv = new DataView(value.buffer);
          dv.setBigUint64(0, BigInt(f(2))); dv.setBigUint64(8, BigInt(f(3)));
          const name = e.clientOrderId();
          dv.setUint8(16, name.length);
          for (let i = 0; i < name.length; i++) dv.setUint8(17 + i, name.charCodeAt(i));
        }
        return this.put(18, be(['u32', f(0)], ['u32', f(1)]), value);
      }
      case EventType.REFERRAL:
        return this.put(9, be(['u32', f(0)]), be(['u32', f(1)], ['u64', f(2)]));
      case EventType.REFERRAL_SHARE: {
        const id = `${f(1)}:${f(3)}`;
        this.earned.set(id, (this.earned.get(id) ?? 0) + f(4));
        return this.put(10, be(['u32', f(1)], ['u16', f(3)]), be(['u64', this.earned.get(id)!]));
      }
      case EventType.INBOX_QUEUED: {
        // Doc: account, envelope nonce, queued (batch time), deadline; kind, nonce, market, side,
        // order type, tif, price, quantity, order id, asset, amount, referrer, reject (int64 each);
        // client id (length + 36 bytes). All but kind, nonce, referrer, reject from the ACCEPTED.
        const a = this.force!.f;
        return this.put(11, be(['u64', f(0)]), be(['u32', f(1)], ['u64', a[3]], ['u64', this.time], ['u64', f(4)],
          ['i64', f(2)], ['i64', f(3)], ['i64', a[4]], ['i64', a[5]], ['i64', a[6]], ['i64', a[7]], ['i64', a[8]],
          ['i64', a[9]], ['i64', a[12]], ['i64', a[10]], ['i64', a[11]], ['i64', f(5)], ['i64', f(6)],
          ['ascii36', this.force!.coid]));
      }
      case EventType.INBOX_INCLUDED:
        return this.put(11, be(['u64', f(0)]), null);
      case EventType.ACCOUNT: return this.put(3, be(['u32', f(0)]), be(['addr', e.addressHex()]));
      case EventType.ORDER_UPDATE:
        if (f(4) >= 2) {
          this.put(15, be(['u64', f(0)]), null);
          return this.put(4, be(['u64', f(0)]), null);
        }
        // Doc: the next priority counter is one past the highest priority an open update carried.
        if (f(12) + 1 > this.counters[3]) {
          this.counters[3] = f(12) + 1;
          this.countersLeaf();
        }
        // Doc: ..., status u8, then locked (field 11), priority (field 12), last fill price (field 9) u64.
        return this.put(4, be(['u64', f(0)]), be(['u32', f(1)], ['u16', f(2)], ['u8', f(3)], ['u64', f(5)], ['u64', f(6)],
          ['u64', f(7)], ['u64', f(8)], ['u8', f(4)], ['u64', f(11)], ['u64', f(12)], ['u64', f(9)]));
      case EventType.MARKET:
        this.markets.set(f(0), [0, 1, 2, 3, 4, 5, 6, 7, 8].map(f));
        return this.marketLeaf(f(0));
      case EventType.FILL:
        this.counters[1] = f(0) + 1;
        this.countersLeaf();
        this.mark.set(f(1), f(7));
        return this.marketLeaf(f(1));
      case EventType.FEES: return this.put(6, new Uint8Array(0), be(['i32', f(0)], ['i32', f(1)]));
      case EventType.CREDIT: return this.put(7, be(['u32', f(0)]), f(1) === 0 ? null : be(['u64', f(1)], ['u32', f(2)]));
      default:
    }
  }
  root(): string {
    const cat = (...a: Uint8Array[]): Uint8Array => {
      const out = new Uint8Array(a.reduce((s, x) => s + x.length, 0));
      let o = 0;
      for (const x of a) out.set(x, o), (o += x.length);
      return out;
    };
    // The trie of the doc, from scratch: path = keccak(kind || key) as 128 base-4 digits; an
    // empty set is 32 zero bytes, one leaf its leaf hash, more keccak(0x00 || 4 child hashes).
    const all = [...this.leaves.values()].map((l) => ({
      path: Buffer.from(keccak_256(cat(new Uint8Array([l.kind]), l.key))).toString('hex'),
      h: keccak_256(cat(new Uint8Array([l.kind]), l.key, l.value)),
    }));
    const digit = (path: string, d: number): number => (parseInt(path[d >> 1], 16) >> (d % 2 === 0 ? 2 : 0)) & 3;
    const H = (set: typeof all, d: number): Uint8Array => {
      if (set.length === 0) return new Uint8Array(32);
      if (set.length === 1) return set[0].h;
      const kids = [0, 1, 2, 3].map((i) => H(set.filter((x) => digit(x.path, d) === i), d + 1));
      return keccak_256(cat(new Uint8Array([0]), ...kids));
    };
    return '0x' + Buffer.from(H(all, 0)).toString('hex');
  }
}
