// Contract calls and answers in the Solidity ABI, by type string, for the few shapes the
// settlement contract uses: static words (uintN, intN, address, bool, bytes32), `bytes`,
// `string`, and arrays of static words. Words are written by src/da/abi.ts (the fills tree's
// encoder); this adds the dynamic tails, decoding and function selectors.
import { keccak256 } from '../da/keccak.js';
import { hexToBytes } from '../da/hex.js';
import { toHex0x } from '../util/hex.js';
import { tailLength, utf8Bytes, writeAddress, writeIntWord, writeUintWord } from '../da/abi.js';
import type { AbiItem } from './artifacts.js';

/** A value by ABI type: address/bytes32/bytes as 0x hex, integers as bigint or safe number. */
export type AbiArg = string | bigint | number | boolean | Uint8Array | readonly AbiArg[];

const WORD = 32;

function isDynamic(type: string): boolean {
  return type === 'bytes' || type === 'string' || type.endsWith('[]');
}

function writeStatic(buf: Uint8Array, off: number, type: string, v: AbiArg): void {
  if (type === 'address') return writeAddress(buf, off + 12, v as string);
  if (type === 'bool') {
    if (typeof v !== 'boolean') throw new TypeError('bool value must be a boolean');
    buf[off + 31] = v ? 1 : 0;
    return;
  }
  if (type === 'bytes32') {
    const b = typeof v === 'string' ? hexToBytes(v, 32, 'bytes32') : (v as Uint8Array);
    if (b.length !== 32) throw new TypeError('bytes32 value must be 32 bytes');
    buf.set(b, off);
    return;
  }
  const m = /^(u?)int([0-9]+)$/.exec(type);
  if (m === null) throw new TypeError(`unsupported ABI type ${type}`);
  if (typeof v !== 'bigint' && typeof v !== 'number') throw new TypeError(`${type} value must be an integer`);
  if (m[1] === 'u') writeUintWord(buf, off, v, Number(m[2]));
  else writeIntWord(buf, off, v, Number(m[2]));
}

function bytesOf(type: string, v: AbiArg): Uint8Array {
  if (type === 'string') return utf8Bytes(v as string);
  return typeof v === 'string' ? hexToBytes(v, undefined, 'bytes') : (v as Uint8Array);
}

/** The tail of one dynamic value. */
function encodeTail(type: string, v: AbiArg): Uint8Array {
  if (type.endsWith('[]')) {
    const inner = type.slice(0, -2);
    if (isDynamic(inner)) throw new TypeError(`unsupported ABI type ${type}`);
    const items = v as readonly AbiArg[];
    const out = new Uint8Array(WORD * (1 + items.length));
    writeUintWord(out, 0, items.length);
    items.forEach((x, i) => writeStatic(out, WORD * (1 + i), inner, x));
    return out;
  }
  const b = bytesOf(type, v);
  const out = new Uint8Array(tailLength(b.length));
  writeUintWord(out, 0, b.length);
  out.set(b, WORD);
  return out;
}

/** abi.encode(values) for the parameter `types`. */
export function encodeParams(types: readonly string[], values: readonly AbiArg[]): Uint8Array {
  if (types.length !== values.length) throw new TypeError(`${types.length} ABI types but ${values.length} values`);
  const tails = types.map((t, i) => (isDynamic(t) ? encodeTail(t, values[i]) : null));
  const size = WORD * types.length + tails.reduce((s, t) => s + (t?.length ?? 0), 0);
  const out = new Uint8Array(size);
  let at = WORD * types.length;
  types.forEach((t, i) => {
    const tail = tails[i];
    if (tail === null) return writeStatic(out, WORD * i, t, values[i]);
    writeUintWord(out, WORD * i, at);
    out.set(tail, at);
    at += tail.length;
  });
  return out;
}

function readWord(data: Uint8Array, off: number): bigint {
  if (off + WORD > data.length) throw new RangeError('ABI data too short');
  let v = 0n;
  for (let i = 0; i < WORD; i++) v = (v << 8n) | BigInt(data[off + i]);
  return v;
}

function readOffset(data: Uint8Array, off: number): number {
  const v = readWord(data, off);
  if (v > BigInt(data.length)) throw new RangeError('ABI offset out of range');
  return Number(v);
}

function decodeStatic(data: Uint8Array, off: number, type: string): AbiArg {
  const w = readWord(data, off);
  if (type === 'address') return '0x' + w.toString(16).padStart(40, '0');
  if (type === 'bool') return w !== 0n;
  if (type === 'bytes32') return toHex0x(data.subarray(off, off + WORD));
  const m = /^(u?)int([0-9]+)$/.exec(type);
  if (m === null) throw new TypeError(`unsupported ABI type ${type}`);
  return m[1] === 'u' ? w : BigInt.asIntN(Number(m[2]), w);
}

/** abi.decode(data, types): integers as bigint, addresses lowercase, bytes as 0x hex. */
export function decodeParams(types: readonly string[], data: Uint8Array): AbiArg[] {
  return types.map((t, i) => {
    if (!isDynamic(t)) return decodeStatic(data, WORD * i, t);
    const at = readOffset(data, WORD * i);
    const n = readOffset(data, at);
    if (t.endsWith('[]')) return Array.from({ length: n }, (_, k) => decodeStatic(data, at + WORD * (1 + k), t.slice(0, -2)));
    if (at + WORD + n > data.length) throw new RangeError('ABI bytes out of range');
    const b = data.subarray(at + WORD, at + WORD + n);
    return t === 'string' ? new TextDecoder().decode(b) : toHex0x(b);
  });
}

/** `name(type1,type2,...)` of a function, event or error. */
export function signatureOf(item: AbiItem): string {
  return `${item.name ?? ''}(${(item.inputs ?? []).map((i) => i.type).join(',')})`;
}

export function selectorOf(item: AbiItem): string {
  return toHex0x(keccak256(new TextEncoder().encode(signatureOf(item))).subarray(0, 4));
}

export function topicOf(item: AbiItem): string {
  return toHex0x(keccak256(new TextEncoder().encode(signatureOf(item))));
}

/** A contract's ABI with encoders by name. */
export class ContractAbi {
  constructor(readonly abi: readonly AbiItem[]) {}

  item(type: string, name: string): AbiItem {
    const it = this.abi.find((x) => x.type === type && x.name === name);
    if (it === undefined) throw new Error(`no ABI ${type} ${name}`);
    return it;
  }

  topicOf(event_name: string): string {
    return topicOf(this.item('event', event_name));
  }

  /** Calldata of function `name`. */
  call(name: string, args: readonly AbiArg[]): string {
    const f = this.item('function', name);
    const body = encodeParams((f.inputs ?? []).map((i) => i.type), args);
    return selectorOf(f) + toHex0x(body).slice(2);
  }

  /** The constructor's arguments, to append to the creation bytecode (hex without 0x). */
  constructorArgs(args: readonly AbiArg[]): string {
    const c = this.abi.find((x) => x.type === 'constructor');
    return toHex0x(encodeParams((c?.inputs ?? []).map((i) => i.type), args)).slice(2);
  }

  decodeResult(name: string, hex: string): AbiArg[] {
    const f = this.item('function', name);
    return decodeParams((f.outputs ?? []).map((o) => o.type), hexToBytes(hex, undefined, 'call result'));
  }

  /** Event fields by name from a log (indexed ones from the topics, the rest from the data). */
  decodeEvent(name: string, topics: readonly string[], data: string): Record<string, AbiArg> {
    const ev = this.item('event', name);
    const inputs = ev.inputs ?? [];
    if (topics[0] !== topicOf(ev)) throw new Error(`log is not a ${name} event`);
    const out: Record<string, AbiArg> = {};
    const plain = inputs.filter((i) => !i.indexed);
    const values = decodeParams(plain.map((i) => i.type), hexToBytes(data, undefined, 'log data'));
    plain.forEach((p, i) => (out[p.name] = values[i]));
    let t = 1;
    for (const i of inputs) {
      if (!i.indexed) continue;
      out[i.name] = decodeStatic(hexToBytes(topics[t++], 32, 'topic'), 0, i.type);
    }
    return out;
  }

  /** The custom error a revert carries (`Name` or `Error(reason)`), or null. */
  errorName(revert_hex: string): string | null {
    if (revert_hex.length < 10) return null;
    const sel = revert_hex.slice(0, 10).toLowerCase();
    if (sel === '0x08c379a0') {
      const [reason] = decodeParams(['string'], hexToBytes('0x' + revert_hex.slice(10), undefined, 'revert'));
      return `Error(${String(reason)})`;
    }
    const e = this.abi.find((x) => x.type === 'error' && selectorOf(x) === sel);
    return e?.name ?? null;
  }
}
