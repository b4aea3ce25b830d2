// A cluster gateway's snapshot (src/cluster/gateway_snapshots.ts): its front thread's pause to take
// one, and what a start from one costs against a start from sequence 1, for the read model of
// bench/journal_flow.ts's journal (by default 10,000 accounts, 200,000 requests).
//
//   npx tsc -p tsconfig.json && node dist/bench/gateway_snapshot.js [--requests N] [--accounts N] [--rounds N] [--dir D]
//
// The journal's batches are executed once untimed (ReplayExecutor, the engine only), then,
// `rounds` times, timed in wall and process CPU ms (the machine is shared: CPU time is the steadier
// figure): the same execution with every event applied to a read model (`replay_engine_rm`) and
// without (`replay_engine`): their difference is the read model's share of a gateway's replay from
// sequence 1 (a lower bound of what a resume saves: the NATS fetches and the event ring come on
// top); the snapshot's export into columns (exportFront: the front thread's whole pause per
// snapshot), its packing (packFront, on the writer thread), and the start's decode and import of
// it into a fresh read model (decodeFront + importFront). Medians; the last line is one JSON
// object {"bench": "gateway_snapshot", ...}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { engineConfigOf } from '../src/config/read.js';
import { ReplayExecutor } from '../src/da/replay.js';
import { Journal } from '../src/journal/journal.js';
import { MarketData } from '../src/marketdata/market_data.js';
import { ReadModel, readModelLimits } from '../src/read_model/read_model.js';
import { decodeFront, exportFront, importFront, packFront } from '../src/snapshot/front_state.js';
import { runMain } from './cli_args.js';
import { generateJournal } from './journal_flow.js';
import { Knobs } from './knobs.js';
import { timedAsync, medianTenth, type Timed } from './timed.js';

const knobs = new Knobs();
const REQUESTS = knobs.number('requests', 200_000, 1, 100_000_000);
const ACCOUNTS = knobs.number('accounts', 10_000, 2, 1_000_000);
const ROUNDS = knobs.number('rounds', 5, 1, 100);
const BASE = knobs.string('dir', os.tmpdir());
knobs.finish();


async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(BASE, 'ringbook-bench-gateway-snapshot-'));
  try {
    await generateJournal(dir, { accounts: ACCOUNTS, requests: REQUESTS, batch: 1000 });
    const cfg = loadConfig({});
    const engine_config = engineConfigOf(cfg);
    const journal = Journal.open(dir);
    /** Every batch's execution from genesis, each event to `onEvent` (none: the engine only). */
    const replay = async (rm: ReadModel | null): Promise<number> => {
      const ex = new ReplayExecutor(engine_config, { state_root: 'deferred', ...(rm === null ? {} : { onEvent: (e) => rm.apply(e) }) });
      ex.genesis();
      let batches = 0;
      for (const b of journal.readTransient(1)) {
        ex.apply(b.batch_id, b.time_ms, b.records, b.count);
        batches++;
      }
      return batches;
    };
    const batches = await replay(null);
    const parts: Record<string, Timed[]> = { replay_engine: [], replay_engine_rm: [], export: [], pack: [], decode_import: [] };
    let bytes = 0;
    let orders = 0;
    for (let r = 0; r < ROUNDS; r++) {
      parts.replay_engine.push((await timedAsync(() => replay(null)))[1]);
      const rm = new ReadModel(engine_config.assets, readModelLimits(cfg.limits));
      parts.replay_engine_rm.push((await timedAsync(() => replay(rm)))[1]);
      orders = rm.orders.size;
      const md = new MarketData(rm);
      const [front, export_t] = await timedAsync(() => exportFront(rm, md));
      parts.export.push(export_t);
      const [packed, pack_t] = await timedAsync(() => packFront(front));
      parts.pack.push(pack_t);
      bytes = packed.length;
      const rm2 = new ReadModel(engine_config.assets, readModelLimits(cfg.limits));
      const [, import_t] = await timedAsync(() => importFront(rm2, new MarketData(rm2), decodeFront(packed)));
      parts.decode_import.push(import_t);
      if (rm2.orders.size !== rm.orders.size || rm2.batch_id !== rm.batch_id) throw new Error('the imported read model differs');
    }
    await journal.close();
    const out: Record<string, number | string> = { bench: 'gateway_snapshot', requests: REQUESTS, accounts: ACCOUNTS, rounds: ROUNDS, batches, orders, bytes };
    for (const [k, ts] of Object.entries(parts)) {
      out[`${k}_wall_ms`] = medianTenth(ts.map((t) => t.wall_ms));
      out[`${k}_cpu_ms`] = medianTenth(ts.map((t) => t.cpu_ms));
    }
    out.read_model_share_cpu_ms = Math.round(((out.replay_engine_rm_cpu_ms as number) - (out.replay_engine_cpu_ms as number)) * 10) / 10;
    out.node = process.version;
    out.load_avg_1m = Math.round(os.loadavg()[0] * 10) / 10;
    console.log(`gateway snapshot at batch ${batches - 1} (${orders} orders in the read model, ${bytes} bytes): export (front pause) ` +
      `${out.export_cpu_ms} ms CPU, pack ${out.pack_cpu_ms}, decode + import ${out.decode_import_cpu_ms}; replay from genesis: engine ` +
      `${out.replay_engine_cpu_ms} ms CPU, engine + read model ${out.replay_engine_rm_cpu_ms} (median of ${ROUNDS})`);
    console.log(JSON.stringify(out));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
