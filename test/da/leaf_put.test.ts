// The leaf encoders' range checks (src/da/state_leaves.ts put*): a value that does not fit its
// width is refused with a RangeError naming it, never written truncated; values that fit are
// written big-endian (the check's message is built only on failure: a cost, not a behaviour).
import { describe, expect, it } from 'vitest';
import { putI32, putU16, putU32, putU64, putU8 } from '../../src/da/state_leaves.js';

describe('leaf encoders', () => {
  it('refuse values that do not fit, naming them', () => {
    const b = new Uint8Array(8);
    expect(() => putU64(b, 0, 2 ** 53)).toThrow(/state root: 9007199254740992 is not a safe integer/);
    expect(() => putU64(b, 0, 1.5)).toThrow(RangeError);
    expect(() => putU32(b, 0, 2 ** 32)).toThrow(/4294967296 does not fit uint32/);
    expect(() => putU32(b, 0, -1)).toThrow(/-1 does not fit uint32/);
    expect(() => putI32(b, 0, 2 ** 31)).toThrow(/does not fit int32/);
    expect(() => putU16(b, 0, 65536)).toThrow(/65536 does not fit uint16/);
    expect(() => putU8(b, 0, 256)).toThrow(/256 does not fit uint8/);
    expect([...b]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('write values that fit big-endian (negative u64 as its int64 two\'s complement)', () => {
    const b = new Uint8Array(8);
    putU64(b, 0, 0x0011223344556677);
    expect(Buffer.from(b).toString('hex')).toBe('0011223344556677');
    putU64(b, 0, -1);
    expect(Buffer.from(b).toString('hex')).toBe('ffffffffffffffff');
    putU32(b, 0, 0xdeadbeef);
    putU16(b, 4, 0xcafe);
    putU8(b, 6, 7);
    putI32(b, 4, -2);
    expect(Buffer.from(b).toString('hex')).toBe('deadbeeffffffffe');
  });
});
