// The LMDB storer thread (wal_storer.ts says why): stores each job's batches into the journal's
// LMDB in one synchronous transaction (durable when it returns: the data's fdatasync, then the
// meta page through LMDB's O_DSYNC descriptor), then publishes the job's sequence number and
// outcome in the shared control words and wakes a waiting journal. The same environment as the
// matcher's (lmdb-js shares it between the threads of a process; LMDB serialises the writers).
import { parentPort, workerData } from 'node:worker_threads';
import { open, type Database } from 'lmdb';
import { journalBatchesDb } from './journal_db.js';
import { describeWriteError, injectedFault } from './journal_fault.js';
import { STORER_DONE, STORER_FAILED, STORER_HEADER_BYTES, STORER_MESSAGE_BYTES, STORER_MESSAGE_MAX, STORER_READY, STORER_UNUSABLE, type StorerData, type StorerJob } from './wal_storer.js';
import { nameThisThread } from '../util/thread_name.js';

const data = workerData as StorerData;
nameThisThread('rb-storer');
const control = new Int32Array(data.control, 0, STORER_HEADER_BYTES / 4);
const message = new Uint8Array(data.control, STORER_HEADER_BYTES);
// Journal.open's options: the same environment, durable commits. A failure to open is kept and
// reported as every job's failure, never thrown here: the matcher never turns its event loop, so it
// would not hear of this thread's end and would wait for its first store forever; a failed job is
// retried on the matcher's own thread instead (wal_store.ts `finishStore`).
let batches: Database<Buffer, number> | null = null;
let open_error: unknown = null;
try {
  if (data.fault_file !== null && injectedFault(data.fault_file) === 'storer') throw new Error('injected storer open failure (test seam)');
  const root = open({ path: data.dir, overlappingSync: false, noSync: false, compression: false, mapSize: 64 * 1024 * 1024 * 1024 });
  batches = root.openDB<Buffer, number>(journalBatchesDb());
} catch (e) {
  open_error = e;
  Atomics.store(control, STORER_UNUSABLE, 1);
}
// The open is over: the journal's own LMDB writes, held until now, may go on (wal_storer_driver.ts).
Atomics.store(control, STORER_READY, 1);
Atomics.notify(control, STORER_READY);

function store(job: StorerJob): void {
  if (batches === null) throw open_error;
  if (data.fault_file !== null && injectedFault(data.fault_file) === 'store') throw new Error('injected store failure (test seam)');
  const bytes = Buffer.from(job.bytes);
  const db = batches;
  db.transactionSync(() => {
    let start = 0;
    for (let i = 0; i < job.ends.length; i++) {
      const ok: unknown = db.putSync(job.first_id + i, bytes.subarray(start, job.ends[i]));
      if (ok === false) throw new Error(`journal write of batch ${job.first_id + i} failed`);
      start = job.ends[i];
    }
  });
}

parentPort?.on('message', (job: StorerJob) => {
  let failed = 0;
  try {
    store(job);
  } catch (e) {
    failed = 1;
    const text = Buffer.from(describeWriteError(e), 'utf8').subarray(0, STORER_MESSAGE_MAX);
    message.set(text);
    Atomics.store(control, STORER_MESSAGE_BYTES, text.length);
  }
  Atomics.store(control, STORER_FAILED, failed);
  Atomics.store(control, STORER_DONE, job.seq);
  Atomics.notify(control, STORER_DONE);
});
