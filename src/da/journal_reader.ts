// Read access to the journal from the DA thread: the same LMDB environment the matcher thread
// writes (lmdb-js shares one environment between the threads of a process), opened with the same
// options as `Journal.open`, decoded by the journal's own `decodeCheckedBatch` (ids, sizes, format;
// the records' checksum was checked by the matcher thread, which wrote the batch or replayed it
// from disk with `Journal.readTransient`, CRC included, before its events reached the DA thread).
// The batch's keccak input hash is computed here, off the matcher and the front; the verifier,
// which trusts nothing, recomputes it from the published bytes.
import { open, type Database, type RootDatabase } from 'lmdb';
import { decodeCheckedBatch } from '../journal/journal_codec.js';
import type { BatchInputSource, RawJournalBatch } from './da_interfaces.js';

export type { RawJournalBatch } from './da_interfaces.js';

export class JournalReader implements BatchInputSource {
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

  /** Id of the oldest batch held (batches below were trimmed after a snapshot); 0 when none. */
  firstBatchId(): number {
    this.root.resetReadTxn();
    for (const key of this.batches.getKeys({ limit: 1 })) return key as number;
    return 0;
  }

  /**
   * The batch as journaled, or undefined when absent. Throws on a malformed header (id, size,
   * format). Its `input_hash` is computed here, in get(), while the read buffer is valid; its
   * `inputs` are a view of lmdb-js's read buffer, which this thread's next LMDB read (of any
   * database) reuses: copy what you keep first (the DA store copies the inputs it keeps). A copy
   * per batch here was the DA worker's largest ArrayBuffer allocation (inputs_arena.ts says why
   * that matters).
   */
  get(batch_id: number): RawJournalBatch | undefined {
    let value = this.batches.getBinaryFast(batch_id);
    if (value === undefined) {
      // lmdb-js keeps one read snapshot per event-loop turn; the matcher thread may have
      // committed this batch after it was taken: renew it once.
      this.root.resetReadTxn();
      value = this.batches.getBinaryFast(batch_id);
    }
    if (value === undefined) return undefined;
    // The journal's decoder for the matcher's format (ids, sizes; no second checksum, no copy);
    // the input hash is computed here, in the DA thread, never on the matcher or the front.
    const b = decodeCheckedBatch(value, batch_id);
    return {
      batch_id,
      time_ms: b.time_ms,
      count: b.count,
      inputs: Buffer.from(b.records.buffer, b.records.byteOffset, b.records.byteLength),
      input_hash: b.input_hash,
    };
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}
