// The journal's LMDB database of batches as every opener names it: the journal's writer
// (journal.ts), its storer thread (wal_storer_worker.ts), the DA thread's reader
// (src/da/journal_reader.ts) and `ringbook backup`'s hold (src/cli/backup_hold.ts). One place, so
// that a change of encoding cannot leave one of them reading another format. Kept apart from
// journal_codec.ts, whose import instantiates the WASM keccak (the storer thread needs none).

/**
 * Key: the batch id; value: the encoded batch (journal_codec.ts), stored as given. A new object
 * per call: lmdb-js's openDB writes into the options it is given (its environment's compression,
 * keyIsUint32), so one object shared by two environments could carry one's settings to the other.
 */
export function journalBatchesDb(): { name: string; encoding: 'binary'; keyEncoding: 'uint32' } {
  return { name: 'batches', encoding: 'binary', keyEncoding: 'uint32' };
}
