/**
 * A minimal Solidity ABI encoder (`abi.encode`, the standard non-packed encoding) for the value
 * kinds the DA layer needs: `uintN`, `intN`, `address`, `string` and `bytes32`.
 *
 * Layout (Solidity ABI spec, top-level parameter list = a tuple):
 * - the head holds one 32-byte word per parameter: static values in place, dynamic values
 *   (`string`) as the byte offset of their tail measured from the start of the encoding;
 * - each `string` tail is its UTF-8 byte length as a `uint256` word followed by the bytes,
 *   right-padded with zeros to a multiple of 32 (an empty string is just the length word).
 *
 * Integers:
 * - `number` values must be safe integers (|v| <= 2^53 - 1); they are written exactly with
 *   32-bit halves, never through floating-point arithmetic on the full value.
 * - `bigint` values may use the type's full range.
 * - negative `intN` values are written as 256-bit two's complement (sign-extended with 0xff),
 *   exactly as Solidity's `abi.encode` does.
 */

export type AbiValue =
  | { readonly type: 'uint'; readonly bits: number; readonly value: number | bigint }
  | { readonly type: 'int'; readonly bits: number; readonly value: number | bigint }
  | { readonly type: 'address'; readonly value: string }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'bytes32'; readonly value: Uint8Array };

const WORD = 32;
const TWO_32 = 4294967296;

/** Lone (unpaired) UTF-16 surrogate. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const utf8 = new TextEncoder();

function checkBits(bits: number): void {
  if (!Number.isInteger(bits) || bits < 8 || bits > 256 || bits % 8 !== 0) {
    throw new RangeError(`invalid integer width ${bits}: expected a multiple of 8 in 8..256`);
  }
}

/**
 * UTF-8 bytes of `s`. Rejects strings holding an unpaired surrogate: `TextEncoder` would silently
 * turn it into U+FFFD, so two different strings would encode (and hash) the same.
 */
export function utf8Bytes(s: string, what = 'string'): Uint8Array {
  if (typeof s !== 'string') throw new TypeError(`${what} must be a string`);
  if (LONE_SURROGATE.test(s)) throw new TypeError(`${what} is not well-formed UTF-16 (lone surrogate)`);
  return utf8.encode(s);
}

function writeU32Be(buf: Uint8Array, off: number, v: number): void {
  buf[off] = v >>> 24;
  buf[off + 1] = (v >>> 16) & 0xff;
  buf[off + 2] = (v >>> 8) & 0xff;
  buf[off + 3] = v & 0xff;
}

/** Write the 64-bit two's complement of a safe integer `v` big-endian at `buf[off..off+8)`. */
function writeInt64Be(buf: Uint8Array, off: number, v: number): void {
  if (v >= 0) {
    const hi = Math.floor(v / TWO_32);
    writeU32Be(buf, off, hi);
    writeU32Be(buf, off + 4, v - hi * TWO_32);
  } else {
    // two's complement of u = -v over 64 bits: ~u + 1, done on 32-bit halves.
    const u = -v;
    const hi = Math.floor(u / TWO_32);
    const lo = u - hi * TWO_32;
    writeU32Be(buf, off, (~hi + (lo === 0 ? 1 : 0)) >>> 0);
    writeU32Be(buf, off + 4, lo === 0 ? 0 : TWO_32 - lo);
  }
}

/** Encode an unsigned integer into the 32-byte word at `buf[off..off+32)` (assumed zeroed). */
export function writeUintWord(buf: Uint8Array, off: number, value: number | bigint, bits = 256): void {
  checkBits(bits);
  if (typeof value === 'bigint') {
    if (value < 0n || value > (1n << BigInt(bits)) - 1n) {
      throw new RangeError(`value ${value} out of range for uint${bits}`);
    }
    writeBigWord(buf, off, value);
    return;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new RangeError(`value ${String(value)} for uint${bits} is not a safe integer`);
  }
  if (value < 0 || (bits < 53 && value > 2 ** bits - 1)) {
    throw new RangeError(`value ${value} out of range for uint${bits}`);
  }
  writeInt64Be(buf, off + WORD - 8, value);
}

/** Encode a signed integer (256-bit two's complement) into `buf[off..off+32)` (assumed zeroed). */
export function writeIntWord(buf: Uint8Array, off: number, value: number | bigint, bits = 256): void {
  checkBits(bits);
  if (typeof value === 'bigint') {
    const half = 1n << BigInt(bits - 1);
    if (value < -half || value > half - 1n) {
      throw new RangeError(`value ${value} out of range for int${bits}`);
    }
    writeBigWord(buf, off, BigInt.asUintN(256, value));
    return;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new RangeError(`value ${String(value)} for int${bits} is not a safe integer`);
  }
  if (bits < 54 && (value < -(2 ** (bits - 1)) || value > 2 ** (bits - 1) - 1)) {
    throw new RangeError(`value ${value} out of range for int${bits}`);
  }
  if (value < 0) buf.fill(0xff, off, off + WORD - 8);
  writeInt64Be(buf, off + WORD - 8, value);
}

function writeBigWord(buf: Uint8Array, off: number, value: bigint): void {
  let v = value;
  for (let i = WORD - 1; i >= 0; i--) {
    buf[off + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

function badAddress(address: unknown, what: string): TypeError {
  return new TypeError(`invalid ${what}: expected 0x followed by 40 hex digits, got ${JSON.stringify(String(address))}`);
}

/**
 * Write a 20-byte `0x`-prefixed hex address (any case; EIP-55 checksums are not enforced) into
 * `buf[off..off+20)`; the caller leaves the 12 bytes before it zero for an ABI word.
 */
export function writeAddress(buf: Uint8Array, off: number, address: string, what = 'address'): void {
  if (typeof address !== 'string' || address.length !== 42 || address.charCodeAt(0) !== 48
    || (address.charCodeAt(1) | 0x20) !== 120) {
    throw badAddress(address, what);
  }
  for (let i = 0; i < 20; i++) {
    const hi = nibble(address.charCodeAt(2 + 2 * i));
    const lo = nibble(address.charCodeAt(3 + 2 * i));
    if ((hi | lo) < 0) throw badAddress(address, what);
    buf[off + i] = (hi << 4) | lo;
  }
}

/** Parse an address as in {@link writeAddress}. */
export function addressBytes(address: string, what = 'address'): Uint8Array {
  const out = new Uint8Array(20);
  writeAddress(out, 0, address, what);
  return out;
}

function nibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  if (l >= 97 && l <= 102) return l - 87;
  return -1;
}

/** Byte length of a dynamic tail holding `n` payload bytes (length word + padded data). */
export function tailLength(n: number): number {
  return WORD + Math.ceil(n / WORD) * WORD;
}

/** `abi.encode(values...)`. */
export function abiEncode(values: readonly AbiValue[]): Uint8Array {
  // First pass: resolve dynamic payloads and the total size.
  const payloads: (Uint8Array | null)[] = new Array<Uint8Array | null>(values.length);
  let size = values.length * WORD;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v.type === 'string') {
      const bytes = utf8Bytes(v.value);
      payloads[i] = bytes;
      size += tailLength(bytes.length);
    } else {
      payloads[i] = null;
    }
  }
  const buf = new Uint8Array(size);
  let tail = values.length * WORD;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    const head = i * WORD;
    switch (v.type) {
      case 'uint':
        writeUintWord(buf, head, v.value, v.bits);
        break;
      case 'int':
        writeIntWord(buf, head, v.value, v.bits);
        break;
      case 'address':
        writeAddress(buf, head + 12, v.value);
        break;
      case 'bytes32':
        if (!(v.value instanceof Uint8Array) || v.value.length !== WORD) {
          throw new TypeError('bytes32 value must be a Uint8Array of 32 bytes');
        }
        buf.set(v.value, head);
        break;
      case 'string': {
        const bytes = payloads[i]!;
        writeUintWord(buf, head, tail);
        writeUintWord(buf, tail, bytes.length);
        buf.set(bytes, tail + WORD);
        tail += tailLength(bytes.length);
        break;
      }
      default: {
        const never: never = v;
        throw new TypeError(`unsupported ABI value ${JSON.stringify(never)}`);
      }
    }
  }
  return buf;
}
