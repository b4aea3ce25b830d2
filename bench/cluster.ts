// Cluster benchmark (issue 18, docs/scale-out.md): signed orders through the cluster roles on a
// real 3-node JetStream cluster on this machine, with 1 and then 2 gateways in front of one
// leader matcher and one hot standby; and the raw JetStream publish rate of request-sized
// messages (R3, file storage, a message id each) that bounds the request stream.
//
// Every process of the cluster runs on this one machine (3 nats-server, 2 matchers, 1-2
// gateways, the client): the figures are what this box does with all of them sharing its
// cores, not what N machines do (docs/scale-out.md has that arithmetic, fed by the per-order
// CPU this bench reports per role).
//
// The first release's gateway and today's are measured in the same run, alternating: gateways
// g1/g2 send every request unit as its own request stream message
// (RINGBOOK_REQUEST_MESSAGE_RECORDS_MAX=1) and run a DA thread (RINGBOOK_GATEWAY_STATE_ROOTS=1),
// g3/g4 pack the units of one event-loop turn into one message and compute no roots (the
// defaults); each round runs 1 then 2 gateways of each kind, and the JSON line has every phase and
// the medians per kind.
//
// Run: npx tsc -p tsconfig.json && node dist/bench/cluster.js [--orders N] [--lanes N] [--rounds N]
//   --orders N   orders per phase (default 3000)
//   --lanes N    concurrent HTTP clients, one order in flight each (default 32)
//   --rounds N   rounds of the four phases (default 2)
//   --old-gateway-roots 0|1  the per-unit gateways run the DA thread too (1, default: the first
//                release's gateway); 0 isolates the batching
//   --cpu-prof D each role writes a V8 CPU profile under D/<node id>/
// Ends with ONE JSON line {"bench":"cluster",...}. Results: docs/benchmarks.md "cluster".
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { eip191Hash } from '../src/auth/eip191.js';
import { orderJsonMessage } from '../src/auth/messages.js';
import { LocalNatsCluster } from '../src/cluster/local_nats.js';
import { RECORD_BYTES } from '../src/cluster/log_format.js';
import { runMain } from './cli_args.js';
import { loadNativeSecp256k1, walletKey, type WalletKey } from './load/flow.js';
import { Knobs } from './knobs.js';
import { medianMeanOfMiddleTwo, quantileFloorRankOfSorted } from './quantile.js';
import { sampleProc, startServer, type ServerChild } from './load/server_child.js';

const MARKET = 'ETH-USDC';
const TICK = 10_000;
const LOT = 100;
/** 1000.00 USDC and below: far under any ask, so post-only bids rest. */
const PRICE_TOP_TICKS = 100_000;
/** Request-sized messages published in the raw JetStream phase, with this many acks outstanding. */
const RAW_MESSAGES = 20_000;
const RAW_IN_FLIGHT = 256;

interface Args {
  orders: number;
  lanes: number;
  rounds: number;
  /** 1: the per-unit gateways also run the DA thread (the first release's gateway); 0: they do not. */
  old_gateway_roots: number;
  /** --cpu-prof DIR: every role writes a V8 CPU profile under DIR/<node id>/ (node --cpu-prof). */
  cpu_prof: string | null;
}

function parseArgs(): Args {
  // bench/knobs.ts: `--orders N` or BENCH_ORDERS, `--lanes N` or BENCH_LANES, `--cpu-prof D` or BENCH_CPU_PROF.
  const knobs = new Knobs();
  const orders = knobs.number('orders', 3000, 100, 200_000);
  const lanes = knobs.number('lanes', 32, 1, 512);
  const rounds = knobs.number('rounds', 2, 1, 20);
  const old_gateway_roots = knobs.number('old-gateway-roots', 1, 0, 1);
  const prof = knobs.optionalString('cpu-prof');
  knobs.finish();
  return { orders, lanes, rounds, old_gateway_roots, cpu_prof: prof === undefined ? null : path.resolve(prof) };
}

type Body = Record<string, unknown>;

function signOrder(secp: ReturnType<typeof loadNativeSecp256k1>, w: WalletKey, nonce: number, seed: number): Body {
  const price = (PRICE_TOP_TICKS - (seed % 5000)) * TICK;
  const f = { market_id: MARKET, side: 'bid', price, quantity: LOT, order_type: 'limit', time_in_force: 'post_only', nonce };
  const s = secp.ecdsaSign(eip191Hash(orderJsonMessage(f)), w.priv);
  return { user: w.address, ...f, signature: '0x' + Buffer.from(s.signature).toString('hex') + (27 + s.recid).toString(16) };
}

/** CPU ms of each process now (null once it is gone). */
function cpuOf(pids: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, pid] of Object.entries(pids)) out[k] = sampleProc(pid, false)?.cpu_ms ?? 0;
  return out;
}

interface PhaseResult {
  /** 'per_unit' (one message per request unit) or 'batched' (one message per gateway turn). */
  publish: string;
  gateways: number;
  orders: number;
  wall_ms: number;
  orders_per_s: number;
  latency_ms_p50: number;
  latency_ms_p99: number;
  failed: number;
  /** Request stream messages per order (1 or more per order: per_unit; below 1: batched). */
  messages_per_order: number;
  /**
   * CPU µs per order of each role: the serving gateways summed, the idle gateways (they read
   * every event too), the leader, the standby, all NATS nodes.
   */
  cpu_us_per_order: Record<string, number>;
}

interface PhaseSetup {
  publish: string;
  /** Serving gateways: node id -> base URL. */
  gateways: [string, string][];
  lanes: number;
  pids: Record<string, number>;
  /** Messages in the request stream now. */
  requestMessages: () => Promise<number>;
}

async function phase(setup: PhaseSetup, work: Body[]): Promise<PhaseResult> {
  const { lanes, pids } = setup;
  const gateways = setup.gateways.map(([, url]) => url);
  const serving = new Set(setup.gateways.map(([id]) => id));
  const latencies: number[] = [];
  let failed = 0;
  const messages_before = await setup.requestMessages();
  const before = cpuOf(pids);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    const base = gateways[lane % gateways.length];
    for (let i = lane; i < work.length; i += lanes) {
      const s = performance.now();
      const r = await fetch(`${base}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(work[i]) });
      if (r.status !== 200) failed++;
      await r.text();
      latencies.push(performance.now() - s);
    }
  }));
  const wall_ms = performance.now() - t0;
  const after = cpuOf(pids);
  const messages = (await setup.requestMessages()) - messages_before;
  latencies.sort((a, b) => a - b);
  const per = (keys: string[]): number => Number(((keys.reduce((t, k) => t + after[k] - before[k], 0) * 1000) / work.length).toFixed(1));
  const keys = Object.keys(pids);
  return {
    publish: setup.publish, gateways: gateways.length, orders: work.length, wall_ms: Math.round(wall_ms),
    orders_per_s: Math.round((work.length * 1000) / wall_ms),
    latency_ms_p50: Number(quantileFloorRankOfSorted(latencies, 0.5).toFixed(2)), latency_ms_p99: Number(quantileFloorRankOfSorted(latencies, 0.99).toFixed(2)), failed,
    messages_per_order: Number((messages / work.length).toFixed(3)),
    cpu_us_per_order: {
      gateways: per(keys.filter((k) => serving.has(k))), idle_gateways: per(keys.filter((k) => k.startsWith('g') && !serving.has(k))),
      leader: per(['m1']), standby: per(['m2']), nats: per(keys.filter((k) => k.startsWith('n'))),
    },
  };
}

/** The median of each phase kind's orders/s, p99 and serving gateways' CPU per order. */
function medians(results: PhaseResult[]): Record<string, { orders_per_s: number; latency_ms_p99: number; gateway_cpu_us_per_order: number }> {
  const out: Record<string, { orders_per_s: number; latency_ms_p99: number; gateway_cpu_us_per_order: number }> = {};
  for (const kind of new Set(results.map((r) => `${r.publish}_${r.gateways}gw`))) {
    const rs = results.filter((r) => `${r.publish}_${r.gateways}gw` === kind);
    out[kind] = {
      orders_per_s: medianMeanOfMiddleTwo(rs.map((r) => r.orders_per_s)), latency_ms_p99: medianMeanOfMiddleTwo(rs.map((r) => r.latency_ms_p99)),
      gateway_cpu_us_per_order: medianMeanOfMiddleTwo(rs.map((r) => r.cpu_us_per_order.gateways)),
    };
  }
  return out;
}

/** Raw JetStream: request-sized messages with message ids to an R3 file stream, RAW_IN_FLIGHT acks outstanding. */
async function rawPublish(urls: string[]): Promise<{ messages: number; per_s: number; ack_ms_p50: number; ack_ms_p99: number }> {
  const nc = await connect({ servers: urls });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'RB_BENCH', subjects: ['rb.bench'], storage: 'file' as never, num_replicas: 3 });
  const js = jetstream(nc);
  const payload = new Uint8Array(RECORD_BYTES * 2); // a request and its consent slot
  const acks: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: RAW_IN_FLIGHT }, async () => {
    while (next < RAW_MESSAGES) {
      const id = next++;
      const s = performance.now();
      await js.publish('rb.bench', payload, { msgID: `bench.${id}` });
      acks.push(performance.now() - s);
    }
  }));
  const wall_ms = performance.now() - t0;
  await jsm.streams.delete('RB_BENCH');
  await nc.close();
  acks.sort((a, b) => a - b);
  return {
    messages: RAW_MESSAGES, per_s: Math.round((RAW_MESSAGES * 1000) / wall_ms),
    ack_ms_p50: Number(quantileFloorRankOfSorted(acks, 0.5).toFixed(2)), ack_ms_p99: Number(quantileFloorRankOfSorted(acks, 0.99).toFixed(2)),
  };
}

async function main(): Promise<void> {
  const args = parseArgs();
  const main_js = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/main.js');
  const admin_token = 'bench-cluster-admin-token';
  const high = 1_000_000_000;
  const config = { rate_limits: { orders_per_wallet: high, cancels_per_wallet: high, deposits_per_wallet: high, withdrawals_per_wallet: high, gets_per_ip: high } };
  const nats = await LocalNatsCluster.start(3);
  const env = { RINGBOOK_NATS_URLS: nats.urls().join(','), RINGBOOK_OPERATOR_KEY: '42'.repeat(32) };
  const servers: ServerChild[] = [];
  const role = async (r: string, id: string, extra: Record<string, string> = {}): Promise<ServerChild> => {
    const s = await startServer({ main_js, admin_token, config, env: { ...env, ...extra, RINGBOOK_ROLE: r, RINGBOOK_NODE_ID: id }, node_flags: args.cpu_prof === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.join(args.cpu_prof, id)}`] });
    servers.push(s);
    return s;
  };
  try {
    const m1 = await role('matcher', 'm1');
    // m1 takes the lease first (it starts alone); m2 is the hot standby.
    await new Promise((r) => setTimeout(r, 500));
    const m2 = await role('matcher', 'm2');
    // g1, g2: the first release's gateway (one message per request unit, and a DA thread computing
    // state roots), unless --old-gateway-roots 0; g3, g4: today's defaults (the units of a turn in
    // one message; no DA thread: the matchers and the DA role compute roots).
    const per_unit = { RINGBOOK_REQUEST_MESSAGE_RECORDS_MAX: '1', RINGBOOK_GATEWAY_STATE_ROOTS: String(args.old_gateway_roots) };
    const gw = [await role('gateway', 'g1', per_unit), await role('gateway', 'g2', per_unit), await role('gateway', 'g3'), await role('gateway', 'g4')];
    const urls = gw.map((g) => `http://127.0.0.1:${g.port}`);
    const secp = loadNativeSecp256k1();
    const wallets = Array.from({ length: args.lanes }, (_, i) => walletKey(secp, 'ringbook-cluster', i));
    for (const w of wallets) {
      const r = await fetch(`${urls[0]}/deposit`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-admin-token': admin_token },
        body: JSON.stringify({ user: w.address, asset: 'USDC', amount: '100000000' }),
      });
      if (r.status !== 200) throw new Error(`deposit failed: ${r.status} ${await r.text()}`);
    }
    // Lane k always sends wallet k's orders, in nonce order.
    const nonces = wallets.map(() => 0);
    const build = (n: number, seed: number): Body[] => Array.from({ length: n }, (_, i) => {
      const k = i % args.lanes;
      return signOrder(secp, wallets[k], ++nonces[k], seed + i);
    });
    const pids: Record<string, number> = { m1: m1.pid, m2: m2.pid };
    gw.forEach((g, i) => {
      pids[`g${i + 1}`] = g.pid;
    });
    nats.nodes.forEach((n, i) => {
      if (n.proc?.pid !== undefined) pids[`n${i + 1}`] = n.proc.pid;
    });
    const nc = await connect({ servers: nats.urls() });
    const jsm = await jetstreamManager(nc);
    const requestMessages = async (): Promise<number> => (await jsm.streams.info('RB_REQUESTS')).state.last_seq;
    const kinds: { publish: string; gateways: [string, string][] }[] = [
      { publish: 'per_unit', gateways: [['g1', urls[0]]] },
      { publish: 'batched', gateways: [['g3', urls[2]]] },
      { publish: 'per_unit', gateways: [['g1', urls[0]], ['g2', urls[1]]] },
      { publish: 'batched', gateways: [['g3', urls[2]], ['g4', urls[3]]] },
    ];
    // Signed up front (nonces in the order the phases send them), outside every measurement.
    const t_sign = performance.now();
    const warm = build(args.lanes * 8, 0);
    const work = Array.from({ length: args.rounds * kinds.length }, (_, i) => build(args.orders, 1000 * (i + 1)));
    const sign_ms = performance.now() - t_sign;
    // Warm-up over all four gateways (wallet k's orders reach one gateway in order within a phase).
    await phase({ publish: 'warm', gateways: urls.map((u, i): [string, string] => [`g${i + 1}`, u]), lanes: args.lanes, pids, requestMessages }, warm);
    const results: PhaseResult[] = [];
    for (let i = 0; i < work.length; i++) {
      const k = kinds[i % kinds.length];
      const r = await phase({ ...k, lanes: args.lanes, pids, requestMessages }, work[i]);
      console.error(`cluster bench: ${r.publish} ${r.gateways} gateway(s): ${r.orders_per_s} orders/s, p99 ${r.latency_ms_p99} ms, ` +
        `gateway CPU ${r.cpu_us_per_order.gateways} µs/order, ${r.messages_per_order} messages/order`);
      results.push(r);
    }
    await nc.close();
    const raw = await rawPublish(nats.urls());
    const m1_status = await (await fetch(`http://127.0.0.1:${m1.port}/status`)).json() as { batch_id: number; batches_cut: number; state_root: string };
    const m2_status = await (await fetch(`http://127.0.0.1:${m2.port}/status`)).json() as { batch_id: number; mismatches: number; state_root: string };
    const line = {
      bench: 'cluster',
      date: new Date().toISOString(),
      machine: `${os.cpus().length} cpu ${os.cpus()[0]?.model ?? '?'}`,
      note: 'all roles, 3 nats-server and the client on this one machine, shared with other work',
      lanes: args.lanes,
      sign_ms: Math.round(sign_ms),
      rounds: args.rounds,
      old_gateway_roots: args.old_gateway_roots === 1,
      medians: medians(results),
      phases: results,
      jetstream_publish_r3: raw,
      batches: m1_status.batches_cut,
      orders_per_batch: Number(((args.lanes * 8 + work.length * args.orders) / Math.max(1, m1_status.batches_cut)).toFixed(1)),
      standby_agrees: m2_status.mismatches === 0,
    };
    console.log(JSON.stringify(line));
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await nats.stop();
  }
}

runMain(main);
