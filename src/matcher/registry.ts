// The matcher's account registry: 20-byte wallet address <-> dense account id. Ids are handed
// out in request order, so replaying the same requests yields the same ids. Account 0 is the fee
// account and has no address.
//
// Hot path: the front sends an id hint it learned from earlier ACCOUNT events; checking the hint
// is five int32 compares (`findInRecord`: the addresses sit at word offsets of the records and of
// this table), no string. Only a miss builds a key for the Map: the address's 20 bytes as a
// 20-character string (one String.fromCharCode call), not its hex (a 20-part array and a join,
// built for the miss and again for the registration: ~6,000 instructions more per new account;
// docs/benchmarks.md, h16r).

import { toHex0x } from '../util/hex.js';

// Used here through module-local consts: an exported const is a module cell even in its own
// module, which optimized code loads and hole-checks at each use (docs/benchmarks.md, h17r).
const ADDRESS_LENGTH = 20;
export const ADDRESS_BYTES = ADDRESS_LENGTH;
const ADDRESS_WORDS = ADDRESS_LENGTH / 4;

export class AccountRegistry {
  private readonly accounts_max: number;
  /** Id `k`'s address at words [5k, 5k + 5) of `words`, bytes [20k, 20k + 20) of `addresses` (one buffer). */
  private words: Int32Array;
  private addresses: Uint8Array;
  private count = 1; // id 0 is the fee account
  private readonly id_by_key = new Map<string, number>();

  constructor(accounts_max: number) {
    this.accounts_max = accounts_max;
    this.words = new Int32Array(ADDRESS_WORDS * 1024);
    this.addresses = new Uint8Array(this.words.buffer);
  }

  get size(): number {
    return this.count;
  }

  /** The id of the address at `bytes[offset..offset+20)`, or -1 when unknown. */
  find(bytes: Uint8Array, offset: number, hint: number): number {
    if (hint > 0 && hint < this.count && this.matches(hint, bytes, offset)) return hint;
    const id = this.id_by_key.get(keyOf(bytes, offset));
    return id === undefined ? -1 : id;
  }

  /**
   * `find` for an address inside request records: `u8` and `i32` view the same records from the
   * same byte offset and `offset` is a multiple of 4 (the record layout puts addresses at word
   * offsets), so the hint is checked with five word compares instead of twenty byte compares
   * (the matcher's replay spent ~5% of its time in them, issue 15).
   */
  findInRecord(i32: Int32Array, u8: Uint8Array, offset: number, hint: number): number {
    if (hint > 0 && hint < this.count) {
      const w = this.words;
      const base = hint * ADDRESS_WORDS;
      const at = offset >> 2;
      if (w[base] === i32[at] && w[base + 1] === i32[at + 1] && w[base + 2] === i32[at + 2] &&
        w[base + 3] === i32[at + 3] && w[base + 4] === i32[at + 4]) return hint;
    }
    return this.find(u8, offset, -1);
  }

  /** Registers the address; returns its new id, or -1 when accounts_max is reached. */
  register(bytes: Uint8Array, offset: number): number {
    if (this.count >= this.accounts_max) return -1;
    const id = this.count++;
    if ((id + 1) * ADDRESS_LENGTH > this.addresses.length) {
      const grown = new Int32Array(this.words.length * 2);
      grown.set(this.words);
      this.words = grown;
      this.addresses = new Uint8Array(grown.buffer);
    }
    this.addresses.set(bytes.subarray(offset, offset + ADDRESS_LENGTH), id * ADDRESS_LENGTH);
    this.id_by_key.set(keyOf(bytes, offset), id);
    return id;
  }

  /**
   * Takes back the last registration (a tentative one whose request the engine refused): the id
   * is handed out again to the next new address. Only the last id can be taken back.
   */
  unregisterLast(id: number): void {
    if (id !== this.count - 1 || id < 1) throw new Error(`registry: ${id} is not the last registered id`);
    const base = id * ADDRESS_LENGTH;
    this.id_by_key.delete(keyOf(this.addresses, base));
    this.addresses.fill(0, base, base + ADDRESS_LENGTH);
    this.count--;
  }

  addressBytes(id: number): Uint8Array {
    return this.addresses.subarray(id * ADDRESS_LENGTH, (id + 1) * ADDRESS_LENGTH);
  }

  addressHex(id: number): string {
    return toHex0x(this.addresses, id * ADDRESS_LENGTH, (id + 1) * ADDRESS_LENGTH);
  }

  private matches(id: number, bytes: Uint8Array, offset: number): boolean {
    const base = id * ADDRESS_LENGTH;
    for (let i = 0; i < ADDRESS_LENGTH; i++) if (this.addresses[base + i] !== bytes[offset + i]) return false;
    return true;
  }
}

/** The Map key of the address at `bytes[offset..offset+20)`: one UTF-16 unit per byte. */
function keyOf(b: Uint8Array, o: number): string {
  return String.fromCharCode(b[o], b[o + 1], b[o + 2], b[o + 3], b[o + 4], b[o + 5], b[o + 6], b[o + 7], b[o + 8], b[o + 9],
    b[o + 10], b[o + 11], b[o + 12], b[o + 13], b[o + 14], b[o + 15], b[o + 16], b[o + 17], b[o + 18], b[o + 19]);
}
