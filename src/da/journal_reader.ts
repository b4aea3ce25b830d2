// Read access to the journal from the front thread, for the DA publisher: the same LMDB
// environment the matcher thread writes (lmdb-js shares one environment between the threads of a
// process), opened with the same options as `Journal.open`.
//
// Unlike `Journal.read`, this does not recompute the input hash: the matcher computed it when it
// journaled the batch, and the publisher runs on the front thread, where a second keccak over
// every input byte would be pure overhead. It takes the stored hash from the record header (the
// layout of `encodeBatch` in src/journal/journal.ts; test/da checks the two agree). The verifier,
// which trusts nothing, recomputes it from the published bytes.
import { open, type Database, type RootDatabase } from 'lmdb';
import { RECORD_WORDS } from '../ring/records.js';

const MAGIC = 0x524a4e4c; // "RJNL", as in src/journal/journal.ts
const VERSION = 1;
const HEADER_BYTES = 4 * 4 + 8 * 2 + 32;
const HASH_OFFSET = 32;

export interface RawJournalBatch {
  batch_id: number;
  time_ms: number;
  count: number;
  /** The records' bytes (a copy). */
  inputs: Buffer;
  /** 0x hex, as stored. */
  input_hash: string;
}

export class JournalReader {
  private readonly root: RootDatabase;
  private readonly batches: Database<Buffer, number>;

  private constructor(root: RootDatabase) {
    this.root = root;
    this.batches = root.openDB<Buffer, number>({ name: 'batches', encoding: 'binary', keyEncoding: 'uint32' });
  }

  static open(dir: string): JournalReader {
    return new JournalReader(open({ path: dir, overlappingSync: false, noSync: false, compression: false, mapSize: 64 * 1024 * 1024 * 1024 }));
  }

  /** Id of the last journaled batch (0 when none). */
  lastBatchId(): number {
    this.root.resetReadTxn();
    for (const key of this.batches.getKeys({ reverse: true, limit: 1 })) return key as number;
    return 0;
  }

  /** The batch as journaled, or undefined when absent. Throws on a malformed record. */
  get(batch_id: number): RawJournalBatch | undefined {
    let value = this.batches.getBinary(batch_id);
    if (value === undefined) {
      // lmdb-js keeps one read snapshot per event-loop turn; the matcher thread may have
      // committed this batch after it was taken: renew it once.
      this.root.resetReadTxn();
      value = this.batches.getBinary(batch_id);
    }
    if (value === undefined) return undefined;
    const buf = Buffer.from(value.buffer, value.byteOffset, value.length);
    if (buf.length < HEADER_BYTES || buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== VERSION) {
      throw new Error(`journal batch ${batch_id}: bad header`);
    }
    const count = buf.readUInt32LE(8);
    if (buf.readUInt32LE(12) !== RECORD_WORDS || buf.readDoubleLE(16) !== batch_id) throw new Error(`journal batch ${batch_id}: header mismatch`);
    if (buf.length !== HEADER_BYTES + count * RECORD_WORDS * 4) throw new Error(`journal batch ${batch_id}: wrong length`);
    return {
      batch_id,
      time_ms: buf.readDoubleLE(24),
      count,
      inputs: Buffer.from(buf.subarray(HEADER_BYTES)),
      input_hash: '0x' + buf.subarray(HASH_OFFSET, HASH_OFFSET + 32).toString('hex'),
    };
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}
