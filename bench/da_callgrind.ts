// The DA core's instructions per request and per batch, without LMDB (docs/benchmarks.md, h20d,
// h22d, h23d): lmdb-js's environment open crashes under valgrind, so the journal is dumped once
// to a flat file and replayed from it under callgrind.
//
//   node dist/bench/da_callgrind.js dump FILE [accounts 2000] [requests 10000] [batch 70]
//     generates the journal of bench/journal_flow.ts (LMDB, in a temporary directory) and writes
//     every batch's journal value (encodeBatch: the bytes LMDB holds) to FILE; prints one JSON
//     line with the batch count and the first batch holding requests.
//   valgrind --tool=callgrind node --predictable --perf-basic-prof dist/bench/da_callgrind.js \
//     run DIST FILE LAST
//     replays batches 1..LAST of FILE through DIST's ReplayExecutor into its DaPublisherCore
//     (DIST: a build's `dist`, this one's or another's, e.g. a copy of /work/wt/start/dist), with
//     DIST's JournalReader.get reading the dump instead of LMDB (its decoding, the input hash) and
//     a store doing the submit's JS (`checkNext`, `fillRows`, a copy of the inputs) and a sha256
//     of every header and `state_diff_bytes`; prints one JSON line: root, that digest, requests.
//     Two runs at two LASTs: (count at LAST2 - count at LAST1) / the requests between is the
//     core's per request (plus the replay's, which `run ... --bare` counts alone), start-up shared.
//     With --bare the core is not fed (the replay alone).
// V8's compiler and GC frames are left out of the counts afterwards, by function name, from the
// callgrind output (docs/benchmarks.md, h23d, gives the command).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeBatch } from '../src/journal/journal_codec.js';
import { Journal } from '../src/journal/journal.js';
import type { DaPublisherCore } from '../src/da/publisher.js';
import type { ReplayExecutor } from '../src/da/replay.js';
import type { PublishedBatch } from '../src/da/published.js';
import type { DaStore, FillRef } from '../src/da/da_store_contract.js';
import type { JournalReader } from '../src/da/journal_reader.js';
import type { JournalBatch } from '../src/journal/journal_codec.js';
import { BatchField, EventType } from '../src/ring/event_records.js';
import { generateJournal } from './journal_flow.js';

async function dump(file: string, accounts: number, requests: number, batch: number): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-da-callgrind-'));
  try {
    const g = await generateJournal(dir, { accounts, requests, batch });
    const journal = Journal.open(dir);
    const parts: Buffer[] = [];
    let batches = 0;
    for (const b of journal.read(1)) {
      const value = encodeBatch(b.batch_id, b.time_ms, b.records, b.count);
      const len = Buffer.alloc(4);
      len.writeUInt32LE(value.length);
      parts.push(len, value);
      batches++;
    }
    await journal.close();
    fs.writeFileSync(file, Buffer.concat(parts));
    console.log(JSON.stringify({ bench: 'da_callgrind', mode: 'dump', batches, first_request_batch: g.first_request_batch, accounts, requests, batch }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The batches' values of a dump, in id order (id i at index i - 1). */
function readDump(file: string): Uint8Array[] {
  const buf = fs.readFileSync(file);
  const out: Uint8Array[] = [];
  for (let at = 0; at < buf.length;) {
    const len = buf.readUInt32LE(at);
    // A copy at offset 0 of its own buffer, as lmdb-js's read buffer is (decodeCheckedBatch's aligned view).
    out.push(new Uint8Array(buf.subarray(at + 4, at + 4 + len)));
    at += 4 + len;
  }
  return out;
}

interface Build {
  DaPublisherCore: typeof DaPublisherCore;
  JournalReader: typeof JournalReader;
  ReplayExecutor: typeof ReplayExecutor;
  decodeCheckedBatch: (value: Uint8Array, id: number) => JournalBatch;
  checkNext: (store: DaStore, batch: PublishedBatch) => void;
  fillRows: (batch: PublishedBatch) => [number, number][];
  engineConfig: unknown;
}

async function loadBuild(dist: string): Promise<Build> {
  const m = async (rel: string): Promise<Record<string, unknown>> => (await import(path.resolve(dist, rel))) as Record<string, unknown>;
  const [publisher, reader, replay, codec, contract, read, load] = await Promise.all([
    m('src/da/publisher.js'), m('src/da/journal_reader.js'), m('src/da/replay.js'), m('src/journal/journal_codec.js'), m('src/da/da_store_contract.js'),
    m('src/config/read.js'), m('src/config/load.js'),
  ]);
  const engineConfigOf = read.engineConfigOf as (c: unknown) => unknown;
  const loadConfig = load.loadConfig as (o: unknown) => unknown;
  return {
    DaPublisherCore: publisher.DaPublisherCore as Build['DaPublisherCore'], JournalReader: reader.JournalReader as Build['JournalReader'],
    ReplayExecutor: replay.ReplayExecutor as Build['ReplayExecutor'],
    decodeCheckedBatch: codec.decodeCheckedBatch as Build['decodeCheckedBatch'], checkNext: contract.checkNext as Build['checkNext'],
    fillRows: contract.fillRows as Build['fillRows'], engineConfig: engineConfigOf(loadConfig({})),
  };
}

/** The submit's JS of a store, without LMDB, and a digest of what it was given. */
class DigestStore implements DaStore {
  private last = 0;
  private readonly kept = new Uint8Array(1 << 20);
  readonly digest = createHash('sha256');
  constructor(private readonly build: Build) {}

  submit(batch: PublishedBatch, inputs?: Uint8Array): Promise<void> {
    this.build.checkNext(this, batch);
    this.build.fillRows(batch);
    if (inputs !== undefined) this.kept.set(inputs.subarray(0, Math.min(inputs.length, this.kept.length)));
    this.digest.update(JSON.stringify(batch.header));
    this.digest.update(batch.state_diff_bytes ?? EMPTY);
    this.last = batch.header.batch_id;
    return SETTLED;
  }

  get(): PublishedBatch | undefined {
    return undefined;
  }

  latest(): number {
    return this.last;
  }

  fillsOfOrder(): FillRef[] {
    return [];
  }

  close(): Promise<void> {
    return SETTLED;
  }
}
const SETTLED = Promise.resolve();
const EMPTY = new Uint8Array(0);

async function run(dist: string, file: string, last: number, bare: boolean): Promise<void> {
  const build = await loadBuild(dist);
  const values = readDump(file);
  const n = Math.min(last, values.length);
  const store = new DigestStore(build);
  // The build's own JournalReader.get (its decoding and input hash), over the dump instead of
  // LMDB: an instance without its constructor, its LMDB handles replaced by the dump's lookups.
  const values_buf = values.map((v) => Buffer.from(v.buffer, v.byteOffset, v.length));
  const journal = Object.assign(Object.create(build.JournalReader.prototype) as JournalReader, {
    dir: '', root: { resetReadTxn: (): void => undefined }, batches: { getBinaryFast: (id: number): Buffer | undefined => values_buf[id - 1] },
    wal: null, scratch: null, wal_cursor: null, wal_reads: 0, wal_walks: 0,
    lastBatchId: (): number => 0, close: (): Promise<void> => SETTLED,
  });
  const core = bare ? null : new build.DaPublisherCore({ assets: ['ETH', 'BTC', 'USDC'], store, journal, log: (m) => console.error(m) });
  const exec = new build.ReplayExecutor(build.engineConfig as never, {
    state_root: false,
    event_ring_slots: 1 << 14,
    onEvent: core === null ? undefined : (e) => {
      core.onEvent(e);
      if (e.type() === EventType.BATCH_COMMITTED) core.onBatch(e.field(BatchField.BATCH_ID), e.field(BatchField.TIME_MS));
    },
  });
  exec.genesis();
  let requests = 0;
  for (let id = 1; id <= n; id++) {
    const b = build.decodeCheckedBatch(values[id - 1], id);
    // The matcher reads records as 8-byte aligned views (the journal value's 24-byte header leaves them at 4).
    exec.apply(id, b.time_ms, new Int32Array(b.records), b.count);
    requests += b.count;
  }
  if (core !== null && core.failure !== null) throw new Error(`DA core failed: ${core.failure}`);
  console.log(JSON.stringify({
    bench: 'da_callgrind', mode: bare ? 'bare' : 'run', last: n, records: requests, published: core?.published ?? 0,
    root: core?.stateRoot() ?? '', digest: store.digest.digest('hex'),
  }));
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'dump') {
  await dump(args[0], Number(args[1] ?? 2000), Number(args[2] ?? 10_000), Number(args[3] ?? 70));
} else if (mode === 'run') {
  await run(args[0], args[1], Number(args[2]), args.includes('--bare'));
} else {
  throw new Error('usage: da_callgrind.js dump FILE [accounts requests batch] | run DIST FILE LAST [--bare]');
}
