// One attempt of each write the matcher thread's journal makes (wal_store.ts; the journal's
// `retried` repeats a failed one, holding the caller): a batch's write-ahead record, a batch put
// into LMDB directly (too large for the file, or no file), and a store of write-ahead batches into
// LMDB. Each reads the test seam's fault file first (journal_fault.ts; never set in production).
import type { Database } from 'lmdb';
import { injectedFault } from './journal_fault.js';
import type { WalBatch, WalWriter } from './wal.js';

/** The write-ahead record of batch `batch_id` (durable when it returns). */
export function walOnce(wal: WalWriter, batch_id: number, value: Buffer, fault_file: string | null | undefined): void {
  const injected = fault_file ? injectedFault(fault_file) : null;
  if (injected === 'write') throw new Error('injected write failure (test seam)');
  wal.append(batch_id, value, injected === 'fsync' ? () => {
    throw new Error('injected fsync failure (test seam): durability unknown');
  } : undefined);
}

/** Batch `batch_id` straight into LMDB, in one synchronous transaction (durable when it returns). */
export function putOnce(db: Database<Buffer, number>, batch_id: number, value: Buffer, fault_file: string | null | undefined): void {
  const injected = fault_file ? injectedFault(fault_file) : null;
  if (injected === 'write') throw new Error('injected write failure (test seam)');
  // One synchronous transaction, committed with sync on: durable when putSync returns.
  // (lmdb-js returns false for a refused conditional write; its types say void.)
  const ok: unknown = db.putSync(batch_id, value);
  if (ok === false) throw new Error(`journal write of batch ${batch_id} failed`);
  if (injected === 'fsync') throw new Error('injected fsync failure (test seam): durability unknown');
}

/** One synchronous LMDB transaction with `batches`: durable when it returns. */
export function storeOnce(db: Database<Buffer, number>, batches: readonly WalBatch[], fault_file: string | null | undefined): void {
  if (fault_file && injectedFault(fault_file) === 'store') throw new Error('injected store failure (test seam)');
  db.transactionSync(() => {
    for (const b of batches) {
      const ok: unknown = db.putSync(b.batch_id, b.value);
      if (ok === false) throw new Error(`journal write of batch ${b.batch_id} failed`);
    }
  });
}
