// What the leader's purge of RB_REQUESTS (src/cluster/request_purge.ts) costs the NATS nodes: a
// local 3-node JetStream cluster, the request stream as the roles make it (ensureStreams: R3,
// file storage), filled round by round with `--messages` messages of `--bytes` each (message ids
// as the gateways send them), then purged below the last one the way the leader does
// (`jsm.streams.purge(RB_REQUESTS, { seq })`). Per round: the purge request's round trip, the
// nats-server processes' CPU (utime + stime from /proc, 10 ms ticks) over `--window-ms` from the
// purge's start (the followers apply it after the leader answers) less their CPU over an equal
// window without a purge just before, the slowest acknowledgement of a publisher at
// `--probe-rate` messages/s during each of the two windows (a purge holds the stream's leader),
// the nats-servers' CPU for the fill itself, and the stream's bytes before and after. The defaults are
// one default interval (60 s) of ~1,000 orders/s: ~250 request messages/s of ~4 orders (416 bytes
// each) = 15,000 messages of 1,664 bytes. Ends with one JSON line {"bench": ...}.
//   node dist/bench/request_purge.js [--messages 15000] [--bytes 1664] [--rounds 5] [--window-ms 1000] [--probe-rate 200]
import { connect } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { LocalNatsCluster } from '../src/cluster/local_nats.js';
import { ensureStreams, REQUEST_STREAM, REQUEST_SUBJECT } from '../src/cluster/log_format.js';
import { Knobs } from './knobs.js';
import { medianLowerMiddle } from './quantile.js';
import { natsServersCpuUs } from './nats_cpu.js';

const knobs = new Knobs();
const MESSAGES = knobs.number('messages', 15_000, 10, 1_000_000, { integer: true });
const BYTES = knobs.number('bytes', 1_664, 16, 1024 * 1024, { integer: true });
const ROUNDS = knobs.number('rounds', 5, 1, 50, { integer: true });
const WINDOW_MS = knobs.number('window-ms', 1_000, 100, 60_000, { integer: true });
const PROBE_RATE = knobs.number('probe-rate', 200, 1, 10_000);
/** Publishes in flight while filling the stream. */
const PUBLISH_WINDOW = 64;
knobs.finish();

let next_id = 0;
async function fill(js: JetStreamClient, n: number): Promise<number> {
  const body = new Uint8Array(BYTES).fill(7);
  let last = 0;
  for (let sent = 0; sent < n;) {
    const k = Math.min(PUBLISH_WINDOW, n - sent);
    const acks = await Promise.all(Array.from({ length: k }, () => js.publish(REQUEST_SUBJECT, body, { msgID: `bench.${next_id++}` })));
    last = Math.max(last, ...acks.map((a) => a.seq));
    sent += k;
  }
  return last;
}

/** The servers' CPU (µs) over `ms` from the start of `during`, and the slowest probe publish's acknowledgement (ms) meanwhile. */
async function cpuOver(cluster: LocalNatsCluster, js: JetStreamClient, ms: number, during: () => Promise<void> = async () => undefined): Promise<[number, number]> {
  const c0 = natsServersCpuUs(cluster);
  const t0 = performance.now();
  const acks: Promise<number>[] = [];
  const body = new Uint8Array(BYTES).fill(9);
  const probe = setInterval(() => {
    const p0 = performance.now();
    acks.push(js.publish(REQUEST_SUBJECT, body, { msgID: `probe.${next_id++}` }).then(() => performance.now() - p0));
  }, 1000 / PROBE_RATE);
  await during();
  const left = ms - (performance.now() - t0);
  if (left > 0) await new Promise((r) => setTimeout(r, left));
  clearInterval(probe);
  const cpu = natsServersCpuUs(cluster) - c0;
  const slowest = Math.max(0, ...(await Promise.all(acks)));
  return [cpu, slowest];
}

interface Round {
  purged: number; rtt_ms: number; server_cpu_ms: number; fill_server_cpu_ms: number; probe_ack_max_ms_idle: number; probe_ack_max_ms_purge: number;
  bytes_before: number; bytes_after: number;
}

async function main(): Promise<void> {
  const cluster = await LocalNatsCluster.start(3);
  const nc = await connect({ servers: cluster.urls() });
  try {
    const jsm = await ensureStreams(nc, { replicas: 3 });
    const js = jetstream(nc);
    const rounds: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const f0 = natsServersCpuUs(cluster);
      const last = await fill(js, MESSAGES);
      const fill_us = natsServersCpuUs(cluster) - f0;
      const bytes_before = (await jsm.streams.info(REQUEST_STREAM)).state.bytes;
      // Let the fill's replication settle, then an idle window as the baseline.
      await new Promise((r) => setTimeout(r, WINDOW_MS));
      const [idle_us, idle_ack_ms] = await cpuOver(cluster, js, WINDOW_MS);
      let purged = 0;
      let rtt_ms = 0;
      const [purge_us, purge_ack_ms] = await cpuOver(cluster, js, WINDOW_MS, async () => {
        const t0 = performance.now();
        purged = (await jsm.streams.purge(REQUEST_STREAM, { seq: last })).purged;
        rtt_ms = performance.now() - t0;
      });
      const bytes_after = (await jsm.streams.info(REQUEST_STREAM)).state.bytes;
      const r: Round = {
        purged, rtt_ms: Number(rtt_ms.toFixed(1)), server_cpu_ms: (purge_us - idle_us) / 1000, fill_server_cpu_ms: fill_us / 1000,
        probe_ack_max_ms_idle: Number(idle_ack_ms.toFixed(1)), probe_ack_max_ms_purge: Number(purge_ack_ms.toFixed(1)), bytes_before, bytes_after,
      };
      rounds.push(r);
      console.error(`request_purge round ${round + 1}: ${JSON.stringify(r)}`);
    }
    const med = (f: (r: Round) => number): number => medianLowerMiddle(rounds.map(f));
    console.log(JSON.stringify({
      bench: 'request_purge', messages: MESSAGES, bytes: BYTES, rounds: ROUNDS, window_ms: WINDOW_MS,
      purged: med((r) => r.purged), purge_rtt_ms: med((r) => r.rtt_ms), purge_server_cpu_ms: med((r) => r.server_cpu_ms),
      fill_server_cpu_ms: med((r) => r.fill_server_cpu_ms), probe_rate: PROBE_RATE,
      probe_ack_max_ms_idle: med((r) => r.probe_ack_max_ms_idle), probe_ack_max_ms_purge: med((r) => r.probe_ack_max_ms_purge),
      stream_bytes_before: med((r) => r.bytes_before), stream_bytes_after: med((r) => r.bytes_after),
    }));
  } finally {
    await nc.close();
    await cluster.stop();
  }
}

await main();
