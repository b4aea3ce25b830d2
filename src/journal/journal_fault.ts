// The journal writers' fault helpers, shared by the LMDB journal (journal.ts), its write-ahead
// coordination (wal_store.ts) and the cluster's event store (src/cluster/matcher_store.ts).
import { readFileSync } from 'node:fs';

export function describeWriteError(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  const message = e instanceof Error ? e.message : String(e);
  return code === undefined ? message : `${message} (code ${String(code)})`;
}

/**
 * The fault a test asks for through the fault file: 'write', 'fsync', 'store' (every LMDB store of
 * write-ahead batches fails), 'storer' (the storer thread cannot open LMDB: wal_storer_worker.ts).
 */
export function injectedFault(file: string): 'write' | 'fsync' | 'store' | 'storer' | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
  return text === 'write' || text === 'fsync' || text === 'store' || text === 'storer' ? text : null;
}
