// The DA worker thread: DaPublisherCore over the packed committed events the front posts
// (src/da/da_thread.ts). It owns the DA store writes and reads the journal; after each message
// it reports the newest state root back.
import { parentPort, workerData } from 'node:worker_threads';
import { BatchField, EventType } from '../ring/event_records.js';
import { LmdbDaStore } from './da_store.js';
import type { DaWorkerData, FromWorker } from './da_interfaces.js';
import { PackedFields, PackedRing, type PackedEvents } from './event_packing.js';
import { JournalReader } from './journal_reader.js';
import { DaPublisherCore } from './publisher.js';
import { componentLog, configureLogs } from '../util/log.js';
import { nameThisThread, THREAD_NAMES } from '../util/thread_name.js';
import { prioritizeBackgroundThread } from '../util/thread_priority.js';
import { answerMemoryQuestions } from '../util/thread_memory.js';

const data = workerData as DaWorkerData;
nameThisThread(THREAD_NAMES.da);
const port = parentPort;
if (port === null) throw new Error('da_worker: not in a worker thread');
configureLogs(data.log);
prioritizeBackgroundThread('DA', data.priority);
const log = componentLog('da');
answerMemoryQuestions('da');
// One commit per message (at the end of its turn): the front already groups the batches of
// DA_POST_INTERVAL_MS into one message, so a timer here would only add its interval to the lag
// before a root is reported (and a wake-up). A commit still in flight when the next message comes
// makes that one's group larger (da_store.ts), never a queue. The commit runs on this thread
// (sync_commits): nothing else waits for it here, and lmdb-js's pool threads cost ~8 more context
// switches per commit.
const store = data.da_dir === null ? null : LmdbDaStore.open(data.da_dir, { commit_interval_ms: 0, sync_commits: true });
const core = new DaPublisherCore({
  assets: data.assets,
  store,
  journal: data.journal_dir === null ? null : JournalReader.open(data.journal_dir),
  log: (m) => log.error(m),
});
const fields = new PackedFields(new PackedRing(data.events_ring));

log.debug('ringbook: DA thread started', { publishing: data.da_dir !== null });

// Resuming from a snapshot: load its leaves and check their root before any event is read (the
// front waits for this report before it serves).
// The report also says from which batch on the replay has roots to compute (the front's backlog).
if (data.restore === null) {
  port.postMessage({ type: 'restored', report: null, error: null, root_known_batch_id: core.rootKnownBatchId() } satisfies FromWorker);
} else {
  try {
    const report = core.restore(data.restore);
    port.postMessage({ type: 'restored', report, error: null, root_known_batch_id: core.rootKnownBatchId() } satisfies FromWorker);
  } catch (e) {
    port.postMessage({ type: 'restored', report: null, error: e instanceof Error ? e.message : String(e), root_known_batch_id: -1 } satisfies FromWorker);
  }
}

function post(m: FromWorker): void {
  port!.postMessage(m);
}

port.on('message', (m: PackedEvents | { type: 'close' }) => {
  if (m.type === 'events') {
    fields.load(m);
    const root_ms: number[] = [];
    for (let i = 0; i < m.count; i++) {
      fields.i = i;
      core.onEvent(fields);
      if (fields.type() === EventType.BATCH_COMMITTED) {
        const before_ms = core.root_ms;
        core.onBatch(fields.field(BatchField.BATCH_ID), fields.field(BatchField.TIME_MS));
        root_ms.push(core.root_ms - before_ms);
      }
    }
    fields.done(m);
    // Report the root only once its batch is readable from the store (rootReport: a batch whose
    // store commit failed is not reported published; the failure is).
    void core.rootReport().then((r) => post({
      type: 'root', ...r, recheck_mismatches: core.recheck_mismatches, store_commits: store?.commits ?? 0, root_ms,
    }));
    return;
  }
  core.close().then(() => post({ type: 'closed' }), (e: unknown) => {
    log.error('ringbook: DA worker close failed', e);
    post({ type: 'closed' });
  });
});
