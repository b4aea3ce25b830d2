// The journal's batch format, shared by every reader and the writer: a header (magic, version,
// record count, record size, CRC-32 of the records, batch id, time), then the records themselves.
// Encoding and decoding live apart from the LMDB journal (journal.ts) so that readers which only
// decode stored bytes (the DA thread's reader, tests, benches) need not import the store.
//
// Each stored batch carries a CRC-32 of its records (zlib's, computed by crc32.ts: cheap on the
// matcher thread, where keccak in JS cost a third of the time); replay recomputes it, so a torn or altered
// batch is reported, never silently replayed. The batch's keccak256 input hash, which the DA header
// commits to, is computed off the matcher by whoever reads the batch (`inputHash`).
import { journalCrc32 } from './crc32.js';
import { keccak256WasmOne as keccak256 } from '../util/keccak_wasm.js';
import { RECORD_WORDS } from '../ring/records.js';

const MAGIC = 0x524a4e4c; // "RJNL"
/**
 * 3: signed requests are followed by consent slots (src/ring/consent.ts), and the rules changed
 * with them (every address is an account; force-include envelopes have their own nonces), so a
 * version 2 journal would re-execute differently: it is refused, never misread.
 */
export const JOURNAL_VERSION = 3;
const VERSION = JOURNAL_VERSION;
/** magic, version, count, record_words, crc32 (u32 each), batch_id, time_ms (f64). */
const HEADER_BYTES = 5 * 4 + 8 * 2;

export interface JournalBatch {
  batch_id: number;
  time_ms: number;
  count: number;
  /** `count` records of RECORD_WORDS words each. */
  records: Int32Array;
  /** keccak256 of the records' bytes, 0x hex. */
  input_hash: string;
  bytes: number;
}

export class JournalCorruption extends Error {
  override name = 'JournalCorruption';
}

export function encodeBatch(batch_id: number, time_ms: number, records: Int32Array, count: number): Buffer {
  const record_bytes = count * RECORD_WORDS * 4;
  const out = Buffer.allocUnsafe(HEADER_BYTES + record_bytes);
  const body = new Uint8Array(records.buffer, records.byteOffset, record_bytes);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(VERSION, 4);
  out.writeUInt32LE(count, 8);
  out.writeUInt32LE(RECORD_WORDS, 12);
  out.writeUInt32LE(journalCrc32(body), 16);
  out.writeDoubleLE(batch_id, 20);
  out.writeDoubleLE(time_ms, 28);
  out.set(body, HEADER_BYTES);
  return out;
}

/** keccak256 of a batch's record bytes, 0x hex: the input hash of its DA header. */
export function inputHash(records: Int32Array): string {
  return inputHashOfBytes(new Uint8Array(records.buffer, records.byteOffset, records.byteLength));
}

/** The same hash over the records' bytes (the cluster's DA role reads them from a batch message). */
export function inputHashOfBytes(bytes: Uint8Array): string {
  return '0x' + Buffer.from(keccak256(bytes)).toString('hex');
}

/**
 * Checks a stored batch's header (length, magic, version, record size, batch id, total length)
 * and returns its record count; throws JournalCorruption on any difference. Exported for
 * `Journal.readTransient` (journal.ts), which decodes into its own reused buffer.
 */
export function checkHeader(buf: Buffer, expected_id: number): number {
  if (buf.length < HEADER_BYTES) throw new JournalCorruption(`batch ${expected_id}: ${buf.length} bytes, shorter than a header`);
  if (buf.readUInt32LE(0) !== MAGIC) throw new JournalCorruption(`batch ${expected_id}: bad magic`);
  const version = buf.readUInt32LE(4);
  if (version !== VERSION) {
    throw new JournalCorruption(`batch ${expected_id}: journal format version ${version}, this server reads version ${VERSION} only ` +
      (version < VERSION
        ? '(version 3 journals consent and changed the account and force-include nonce rules, so an older journal would re-execute differently): replay it with the release that wrote it, or start from a new data dir'
        : '(written by a newer release)'));
  }
  const count = buf.readUInt32LE(8);
  if (buf.readUInt32LE(12) !== RECORD_WORDS) throw new JournalCorruption(`batch ${expected_id}: record size ${buf.readUInt32LE(12)} words, expected ${RECORD_WORDS}`);
  const batch_id = buf.readDoubleLE(20);
  if (batch_id !== expected_id) throw new JournalCorruption(`batch ${expected_id}: header says batch ${batch_id}`);
  const record_bytes = count * RECORD_WORDS * 4;
  if (buf.length !== HEADER_BYTES + record_bytes) throw new JournalCorruption(`batch ${expected_id}: ${buf.length} bytes, expected ${HEADER_BYTES + record_bytes}`);
  return count;
}

/** The decoded batch around `records`; its input hash is computed each time it is read (a getter), off the matcher. */
/**
 * A batch as read: its input hash computed only when asked (most readers never ask). A class, not
 * an object literal with a getter: V8 gives such a literal a dictionary-mode map per batch (a map
 * transition, slow loads), which h23d measured on the DA reader's path (docs/benchmarks.md).
 */
class ReadBatch implements JournalBatch {
  constructor(
    readonly batch_id: number,
    readonly time_ms: number,
    readonly count: number,
    readonly records: Int32Array,
    readonly bytes: number,
  ) {}

  get input_hash(): string {
    return inputHash(this.records);
  }
}

export function batchOf(buf: Buffer, batch_id: number, count: number, records: Int32Array): JournalBatch {
  return new ReadBatch(batch_id, buf.readDoubleLE(28), count, records, buf.length);
}

/**
 * A batch read from disk, fully checked: its header and the CRC-32 of its records (a torn or
 * altered record is refused, never replayed). Every reader in the server and the CLI that is the
 * first to read a batch from disk makes these checks (`checkHeader`, `copyChecked`): `Journal.read`
 * with this, and the matcher's replay on start, `ringbook replay` and `ringbook journal inspect`
 * through `Journal.readTransient` (the same checks into a reused buffer). (The benches
 * time readers too: bench/recovery.ts phase 5 times the DA thread's reader alone, over a journal
 * its phase 2 has read with `readTransient`; bench/state_root.ts reads with `Journal.read`
 * before the DA core does.) The records are a copy, independent of `value`.
 */
export function decodeBatch(value: Uint8Array, expected_id: number): JournalBatch {
  const buf = Buffer.from(value.buffer, value.byteOffset, value.length);
  const count = checkHeader(buf, expected_id);
  const copy = new Uint8Array(count * RECORD_WORDS * 4);
  copyChecked(buf, expected_id, copy);
  return batchOf(buf, expected_id, count, new Int32Array(copy.buffer));
}

/**
 * Copies a header-checked batch's records into `into` (exactly their size) and checks their
 * CRC-32 there: the bytes checked are the bytes replayed, whatever happens to `buf` afterwards.
 */
export function copyChecked(buf: Buffer, expected_id: number, into: Uint8Array): void {
  into.set(buf.subarray(HEADER_BYTES));
  if (journalCrc32(into) !== buf.readUInt32LE(16)) throw new JournalCorruption(`batch ${expected_id}: checksum mismatch (altered or torn)`);
}

/**
 * A batch the matcher thread has already checked, read again: its header is checked (a wrong
 * id, size or format is still refused) but its records' CRC-32 is not recomputed, and they are
 * a view into `value` (which the caller owns and must not reuse) instead of a copy. For the DA
 * thread (src/da/journal_reader.ts), which reads each batch right after the matcher wrote it or,
 * on start, after the matcher's replay read it with `readTransient` (checksum included) and sent
 * its events: the second copy and CRC were ~0.2-0.3 µs of the DA thread per request at max rate,
 * for a check already made (docs/verifiability.md, "Journal checks").
 */
export function decodeCheckedBatch(value: Uint8Array, expected_id: number): JournalBatch {
  const buf = Buffer.from(value.buffer, value.byteOffset, value.length);
  const count = checkHeader(buf, expected_id);
  const at = value.byteOffset + HEADER_BYTES;
  // An Int32Array view needs a 4-byte aligned offset (lmdb-js's copies and its reused read buffer start at 0).
  const records = at % 4 === 0
    ? new Int32Array(value.buffer, at, count * RECORD_WORDS)
    : new Int32Array(Uint8Array.prototype.slice.call(buf, HEADER_BYTES).buffer);
  return batchOf(buf, expected_id, count, records);
}
