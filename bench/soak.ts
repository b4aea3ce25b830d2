// The crash soak (issue 20): the real server under a mixed signed flow (crossing bids and asks,
// cancels, amends, cancel-all, a WebSocket subscriber for the fan-out), snapshots every few
// batches with journal trimming on (so kills land during snapshots, trims and DA publication),
// SIGKILLed at a random moment of each round and restarted on the same data dir. After every
// restart it checks against the client's own record of acknowledged requests:
//   - every acknowledged order is there, exactly once, at its price (none lost, none twice);
//   - every wallet's nonce high-water is at least its last acknowledged nonce;
//   - conservation per asset: fees are 0 in this flow (and price x quantity is exact at these
//     ticks and lots), so the wallets' available + locked of each asset sum to exactly what was
//     deposited (deposits are made before the first kill and acknowledged);
//   - the restarted server's own recheck of the published roots found no difference;
//   - every `verify_every` restarts and at the end, `ringbook verify` re-executes every published
//     batch from 1 and agrees on every state root (exit 0).
//
//   node dist/bench/soak.js              # 50 kills (the run test/journal/soak.test.ts makes)
//   node dist/bench/soak.js --long       # 1,000 kills
//   node dist/bench/soak.js --kills 200 --seed 3
// Ends with one JSON line {"bench":"soak",...}; exit code 1 when a check failed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { Rng } from '../src/util/prng.js';
import { numberArg, runIfMain, shortOrLong } from './cli_args.js';
import { medianUpperMiddle } from './quantile.js';
import { adminHeaders, adminState, api, runVerifier, startServer, Wallet, type StartedServer } from '../test/server/harness.js';
import { fastSigner } from '../test/ws/client.js';
import { listSnapshots } from '../src/snapshot/snapshot_file.js';

export interface SoakOptions {
  seed: number;
  kills: number;
  /** Run `ringbook verify` after every this many restarts (and always at the end). */
  verify_every: number;
  /** Wallets per generation; a new generation every `generation_rounds` (order lists stay < 1000). */
  wallets: number;
  generation_rounds: number;
}

export const SHORT: SoakOptions = { seed: 20261125, kills: 50, verify_every: 10, wallets: 6, generation_rounds: 40 };
export const LONG: SoakOptions = { seed: 20261125, kills: 1000, verify_every: 25, wallets: 6, generation_rounds: 40 };

/** Small: a snapshot (and a trim) every 10 batches, several per round, some cut by the kill. */
const SOAK_CONFIG = {
  snapshots: { every_batches: 10, keep: 2 },
  journal: { trim: true },
  fees: { maker_fee_bps: 0, taker_fee_bps: 0 },
};
const DEPOSITS: Record<string, bigint> = { USDC: 1_000_000n, ETH: 1000n };
const UNITS = 1_000_000n;
/** Acknowledged requests a round waits for before its kill (bounded by 10 s). */
const ROUND_ACKS_MIN = 12;
const ROUND_KILL_DELAY_MS_MAX = 300;
/**
 * Every other round waits (bounded) before its kill until a snapshot newer than the round's start
 * is on disk. A snapshot of batch N is written only once the DA thread published N (recovery
 * refuses one the DA store does not hold), and the DA thread runs at threads.background (nice 10):
 * on a loaded machine it can take longer to catch up after a restart than a round lasts, so
 * without this wait no round ever completes a snapshot and every restart replays from an old one
 * or from genesis (the full-suite failure of 2026-11-27: 10 of 50 restarts from a snapshot).
 * The other rounds' kills land wherever the flow is, snapshots in progress included.
 */
const SNAPSHOT_WAIT_EVERY_ROUNDS = 2;
const SNAPSHOT_WAIT_MS_MAX = 60_000;

interface Acked {
  order_id: number;
  price: number;
}

interface Generation {
  wallets: Wallet[];
  signers: Map<string, (m: string) => string>;
  acked: Map<string, Acked[]>;
  nonce_acked: Map<string, number>;
}

export interface SoakReport {
  seed: number;
  kills: number;
  acked_requests: number;
  checked_orders: number;
  restarts_from_snapshot: number;
  /** Restarts whose snapshots directory held a snapshot at the kill (each could resume from one). */
  restarts_with_snapshot: number;
  /** Rounds that waited for a snapshot newer than their start before their kill, and how long at most. */
  snapshot_waits: number;
  snapshot_wait_ms_max: number;
  trims_seen: number;
  verifier_runs: number;
  failures: string[];
  duration_s: number;
  restart_ms_p50: number;
}

async function newGeneration(s: StartedServer, n: number): Promise<Generation> {
  const a = api(s.url);
  const wallets = Array.from({ length: n }, () => Wallet.random());
  for (const w of wallets) {
    for (const [asset, amount] of Object.entries(DEPOSITS)) {
      const r = await a.post('/deposit', { user: w.address, asset, amount: String(amount) }, adminHeaders(s));
      if (r.status !== 200) throw new Error(`soak: deposit failed ${r.status} ${r.text}`);
    }
  }
  return {
    wallets, signers: new Map(wallets.map((w) => [w.address, fastSigner(w)])),
    acked: new Map(wallets.map((w) => [w.address, []])), nonce_acked: new Map(wallets.map((w) => [w.address, 0])),
  };
}

/** One wallet's flow until `stop()`: bids and asks around one price (they cross), cancels, amends, cancel-all. */
async function flow(s: StartedServer, g: Generation, w: Wallet, r: Rng, stop: () => boolean, count: () => void): Promise<void> {
  const a = api(s.url);
  const signer = g.signers.get(w.address)!;
  const mine = g.acked.get(w.address)!;
  for (let n = 0; n < 30 && !stop(); n++) {
    const roll = r.float();
    let body: Record<string, unknown>;
    let path = '/orders';
    let price = 0;
    if (roll < 0.7 || mine.length === 0) {
      price = r.int(1990, 2010) * 10_000;
      body = w.order({ market_id: 'ETH-USDC', side: r.pick(['bid', 'ask']), price, quantity: r.int(1, 5) * 100 }, { signer });
    } else if (roll < 0.85) {
      path = '/orders/cancel';
      body = w.cancel({ order_id: r.pick(mine).order_id }, { signer });
    } else if (roll < 0.97) {
      path = '/orders/amend';
      const o = r.pick(mine);
      body = w.amend({ order_id: o.order_id, price: o.price, quantity: r.int(1, 5) * 100 }, { signer });
    } else {
      path = '/orders/cancel-all';
      body = w.cancelAll('ETH-USDC', { signer });
    }
    let res;
    try {
      res = await a.post(path, body);
    } catch {
      return; // cut by the kill: no answer, nothing promised
    }
    if (res.status === 200) {
      g.nonce_acked.set(w.address, body.nonce as number);
      count();
      if (path === '/orders') mine.push({ order_id: res.body.data.order_id as number, price });
    } else if (res.status >= 500 || ![400, 404].includes(res.status)) {
      // 400/404: a cancel or amend of an order already filled or cancelled is refused by the rules.
      throw new Error(`soak: unexpected answer ${res.status} ${res.text}`);
    }
  }
}

async function checkAfterRestart(s: StartedServer, gens: Generation[], report: SoakReport, fail: (m: string) => void): Promise<void> {
  const a = api(s.url);
  const totals: Record<string, bigint> = {};
  let wallets = 0;
  for (const g of gens) {
    for (const w of g.wallets) {
      wallets++;
      const bal = await a.get(`/account/${w.address}/balances`);
      if (bal.status !== 200) {
        fail(`balances of ${w.address}: ${bal.status}`);
        continue;
      }
      const d = bal.body.data as Record<string, unknown> & { nonce_high_water: number };
      for (const asset of Object.keys(DEPOSITS)) {
        const b = d[asset] as { available: number; locked: number };
        totals[asset] = (totals[asset] ?? 0n) + BigInt(b.available) + BigInt(b.locked);
      }
      if (d.nonce_high_water < g.nonce_acked.get(w.address)!) fail(`${w.address}: nonce high-water ${d.nonce_high_water} below the acknowledged ${g.nonce_acked.get(w.address)}`);
      w.skipTo(d.nonce_high_water);
      if (g !== gens[gens.length - 1]) continue; // older generations: balances only (their orders were checked while current)
      const list = await a.get(`/account/${w.address}/orders?status=all&limit=1000`);
      const orders = list.body.data as { order_id: number; price: number }[];
      const by_id = new Map<number, number>();
      for (const o of orders) {
        if (by_id.has(o.order_id)) fail(`order ${o.order_id} listed twice`);
        by_id.set(o.order_id, o.price);
      }
      for (const ack of g.acked.get(w.address)!) {
        report.checked_orders++;
        const price = by_id.get(ack.order_id);
        if (price === undefined) fail(`acknowledged order ${ack.order_id} of ${w.address} lost`);
        else if (price !== ack.price) fail(`order ${ack.order_id}: price ${price}, acknowledged ${ack.price}`);
      }
    }
  }
  for (const [asset, per_wallet] of Object.entries(DEPOSITS)) {
    const expected = per_wallet * UNITS * BigInt(wallets);
    if ((totals[asset] ?? 0n) !== expected) fail(`conservation of ${asset}: wallets hold ${totals[asset]}, deposited ${expected}`);
  }
  const st = await adminState(s);
  if (st.state_root_rechecks_failed !== 0) fail(`state_root_rechecks_failed = ${st.state_root_rechecks_failed}`);
  if (st.recovery?.snapshot_batch_id !== null && st.recovery?.snapshot_batch_id !== undefined) report.restarts_from_snapshot++;
}

/**
 * Waits until the newest snapshot in `dir` is newer than `after` (ms waited), or null when none
 * came within SNAPSHOT_WAIT_MS_MAX, or the flow ended (no more batches) and the DA thread caught
 * up with the matcher a while ago without one (no batch a snapshot falls on was committed live).
 */
async function waitForNewerSnapshot(s: StartedServer, dir: string, after: number, flow_ended: () => boolean): Promise<number | null> {
  const t0 = Date.now();
  let caught_up_ms = 0;
  while (Date.now() - t0 < SNAPSHOT_WAIT_MS_MAX) {
    if ((listSnapshots(dir)[0]?.batch_id ?? -1) > after) return Date.now() - t0;
    if (flow_ended()) {
      const st = await adminState(s);
      if (st.state_root_batch_id < st.batch_id) caught_up_ms = 0;
      else if (caught_up_ms === 0) caught_up_ms = Date.now();
      else if (Date.now() - caught_up_ms > 1_000) return null;
    }
    await new Promise((res) => setTimeout(res, 25));
  }
  return null;
}

async function verify(s: StartedServer, config_file: string, report: SoakReport, fail: (m: string) => void): Promise<void> {
  // The verifier checks what is published: wait until the DA thread caught up with the matcher.
  for (let i = 0; i < 400; i++) {
    const st = await adminState(s);
    if (st.state_root_batch_id === st.batch_id) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-soak-proofs-'));
  const v = await runVerifier(s.url, config_file, ['--out', out]);
  fs.rmSync(out, { recursive: true, force: true });
  report.verifier_runs++;
  if (v.code !== 0) fail(`ringbook verify exited ${v.code}: ${(v.stdout + v.stderr).slice(-400)}`);
}

export async function runSoak(opts: SoakOptions, log: (m: string) => void = () => undefined, trace?: (m: string) => void): Promise<SoakReport> {
  const t0 = Date.now();
  const report: SoakReport = {
    seed: opts.seed, kills: 0, acked_requests: 0, checked_orders: 0, restarts_from_snapshot: 0, restarts_with_snapshot: 0,
    snapshot_waits: 0, snapshot_wait_ms_max: 0, trims_seen: 0,
    verifier_runs: 0, failures: [], duration_s: 0, restart_ms_p50: 0,
  };
  const fail = (m: string): void => {
    if (report.failures.length < 50) report.failures.push(`kill ${report.kills}: ${m}`);
  };
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-soak-'));
  const config_file = path.join(data_dir, 'soak-config.json');
  fs.writeFileSync(config_file, JSON.stringify(SOAK_CONFIG));
  const snapshots_dir = path.join(data_dir, 'snapshots');
  const env = { RINGBOOK_DATA_DIR: data_dir };
  const r = new Rng(opts.seed);
  const restart_ms: number[] = [];
  let s = await startServer({ env, config: SOAK_CONFIG });
  try {
    const gens: Generation[] = [await newGeneration(s, opts.wallets)];
    for (let round = 0; round < opts.kills; round++) {
      if (round > 0 && round % opts.generation_rounds === 0) gens.push(await newGeneration(s, opts.wallets));
      const g = gens[gens.length - 1];
      // A subscriber for the fan-out, so kills also land while events go out on sockets.
      const ws = new WebSocket(s.url.replace(/^http/, 'ws') + '/ws');
      ws.on('open', () => ws.send(JSON.stringify({ type: 'subscribe', channels: ['book:ETH-USDC', 'trades:ETH-USDC', 'book_delta:ETH-USDC'] })));
      ws.on('error', () => undefined);
      let killed = false;
      let acked_round = 0;
      const round_start_snapshot = listSnapshots(snapshots_dir)[0]?.batch_id ?? -1;
      let flows_done = 0;
      const loops = g.wallets.map((w) => flow(s, g, w, new Rng(r.int(0, 2 ** 31)), () => killed, () => {
        acked_round++;
        report.acked_requests++;
      }).finally(() => flows_done++));
      for (let i = 0; i < 400 && acked_round < ROUND_ACKS_MIN; i++) await new Promise((res) => setTimeout(res, 25));
      if (round % SNAPSHOT_WAIT_EVERY_ROUNDS === 0) {
        const waited_ms = await waitForNewerSnapshot(s, snapshots_dir, round_start_snapshot, () => flows_done === loops.length);
        if (waited_ms !== null) {
          report.snapshot_waits++;
          report.snapshot_wait_ms_max = Math.max(report.snapshot_wait_ms_max, waited_ms);
        }
      }
      await new Promise((res) => setTimeout(res, r.int(0, ROUND_KILL_DELAY_MS_MAX)));
      const snaps_before_kill = listSnapshots(snapshots_dir).map((x) => x.batch_id);
      if (snaps_before_kill.length > 0) report.restarts_with_snapshot++;
      const out = s.output().stdout;
      const killed_lines = trace === undefined ? [] : (out + s.output().stderr).split('\n').filter((l) => /snapshot at|not written|dropped|trimmed/.test(l)).map((l) => l.slice(0, 200));
      report.trims_seen += (out.match(/journal trimmed through/g) ?? []).length;
      await s.stop('SIGKILL');
      killed = true;
      report.kills++;
      ws.terminate();
      await Promise.all(loops);
      const t_start = Date.now();
      s = await startServer({ env, config: SOAK_CONFIG });
      restart_ms.push(Date.now() - t_start);
      if (trace !== undefined) {
        const st = await adminState(s);
        const o = s.output();
        const lines = (o.stdout + o.stderr).split('\n').filter((l) => /snapshot|recovered/.test(l)).map((l) => l.slice(0, 300));
        trace(JSON.stringify({ round, killed_lines, snaps_before_kill, snaps_after_kill: listSnapshots(snapshots_dir).map((x) => x.batch_id), recovery: st.recovery, lines }));
      }
      await checkAfterRestart(s, gens, report, fail);
      if ((round + 1) % opts.verify_every === 0 || round === opts.kills - 1) await verify(s, config_file, report, fail);
      if ((round + 1) % 10 === 0) log(`soak: ${round + 1} kills, ${report.acked_requests} acknowledged requests, ${report.failures.length} failures`);
      if (report.failures.length > 0) break;
    }
  } finally {
    await s.stop('SIGTERM');
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
  // Stays 0 (as set above) in a soak without restarts.
  if (restart_ms.length > 0) report.restart_ms_p50 = medianUpperMiddle(restart_ms);
  report.duration_s = Math.round((Date.now() - t0) / 100) / 10;
  return report;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opts = shortOrLong<SoakOptions>(args, SHORT, LONG);
  opts.seed = numberArg(args, '--seed') ?? opts.seed;
  opts.kills = numberArg(args, '--kills') ?? opts.kills;
  const report = await runSoak(opts, (m) => console.error(m), args.includes('--trace') ? (m) => console.error(m) : undefined);
  for (const f of report.failures) console.error(`FAIL ${f}`);
  console.log(JSON.stringify({ bench: 'soak', ...report, failures: report.failures.length }));
  process.exit(report.failures.length === 0 ? 0 : 1);
}

runIfMain(import.meta.url, main);
