// How fast a role reads the event stream: an ordered consumer alone (`ordered_only`), the
// matcher's consumer reader (src/cluster/log_reader.ts: `consumer_w<N>`, fetching by sequence with
// up to N direct gets in flight while its consumer is being created, as the gateways and DA roles
// read before h28d; `consumer_w1` fetches one at a time, as the matcher did before h29c) against the gateways' and DA roles' reader without a consumer
// (src/cluster/log_reader_seq.ts: direct gets by sequence, a window in flight, woken by the
// stream's republished headers), on a local 3-node JetStream cluster (R3 streams, as the roles'),
// in one process with the publisher.
//   - catch-up: `--messages` messages of `--bytes` each already stored, read from sequence 1 (a
//     gateway's or DA role's start): messages/s, the process's CPU µs per message, gets per message;
//   - live: a publisher at `--live-rate` messages/s for `--live-s` s while the reader follows the
//     tail: the delay from each publish call to its hand-over (p50, p99), gets per message.
// Modes alternate round by round (`--rounds`), medians reported. Wall-clock numbers on a shared
// 2-core machine are noisy: compare the modes within one run. Ends with one JSON line {"bench": ...}.
//   node dist/bench/log_read.js [--messages 3000] [--bytes 16384] [--windows 1,8,32] [--consumer-windows 1,32] [--rounds 3]
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type ConsumerMessages, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { LocalNatsCluster } from '../src/cluster/local_nats.js';
import { ensureStreams, EVENT_STREAM, EVENT_SUBJECT, EVENT_TIP_SUBJECT } from '../src/cluster/log_format.js';
import { FETCH_WINDOW_MAX, LogReader } from '../src/cluster/log_reader.js';
import { SeqLogReader, type LogMessage, type StreamLogReader } from '../src/cluster/log_reader_seq.js';
import { Knobs } from './knobs.js';
import { medianLowerMiddle, percentileNearestRankOfSorted } from './quantile.js';
import { natsServersCpuUs } from './nats_cpu.js';

const knobs = new Knobs();
const MESSAGES = knobs.number('messages', 3_000, 10, 1_000_000, { integer: true });
const BYTES = knobs.number('bytes', 16_384, 16, 4 * 1024 * 1024, { integer: true });
const WINDOWS = knobs.numbers('windows', [1, 8, 32], 1, 1024);
const CONSUMER_WINDOWS = knobs.numbers('consumer-windows', [1, FETCH_WINDOW_MAX], 1, 1024);
const ROUNDS = knobs.number('rounds', 3, 1, 50, { integer: true });
const LIVE_RATE = knobs.number('live-rate', 500, 1, 100_000);
const LIVE_S = knobs.number('live-s', 3, 0, 600);
/** The consumer reader's buffered messages (the roles' EVENTS_PULLED_MAX). */
const CONSUMER_PULLED_MAX = 256;
/** A read that has not finished by then is a failure, not a slow result. */
const READ_MS_MAX = 300_000;
/** Publishes in flight while filling the stream. */
const PUBLISH_WINDOW = 64;
knobs.finish();

type Mode = { name: string; kind: 'ordered' | 'consumer' | 'seq'; window: number };
const MODES: Mode[] = [
  { name: 'ordered_only', kind: 'ordered', window: 0 },
  ...CONSUMER_WINDOWS.map((w): Mode => ({ name: `consumer_w${w}`, kind: 'consumer', window: w })),
  ...WINDOWS.map((w): Mode => ({ name: `seq_w${w}`, kind: 'seq', window: w })),
];

interface Reader {
  reader: StreamLogReader;
  gets: () => number;
  /** Gets the stream leader answered after a replica lagged behind a hint; hints seen. */
  detail: () => string;
}

/** An ordered consumer alone (no fetches by sequence while it is being created): the consumer path's own speed. */
class OrderedOnly implements StreamLogReader {
  next_seq: number;
  private messages: ConsumerMessages | null = null;
  private done: Promise<void> = Promise.resolve();
  constructor(private readonly js: JetStreamClient, from_seq: number, private readonly handle: (m: LogMessage) => void) {
    this.next_seq = from_seq;
  }

  async start(): Promise<void> {
    const consumer = await this.js.consumers.get(EVENT_STREAM, { opt_start_seq: this.next_seq });
    const messages = await consumer.consume({ max_messages: CONSUMER_PULLED_MAX });
    this.messages = messages;
    this.done = (async () => {
      for await (const m of messages) {
        this.handle({ seq: m.seq, data: m.data, headers: m.headers });
        this.next_seq = m.seq + 1;
      }
    })();
  }

  async close(): Promise<void> {
    this.messages?.stop();
    await this.done;
  }
}

function makeReader(nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager, mode: Mode, from_seq: number,
  handle: (m: LogMessage) => void): Reader {
  if (mode.kind === 'ordered') return { reader: new OrderedOnly(js, from_seq, handle), gets: () => 0, detail: () => '' };
  if (mode.kind === 'consumer') {
    const r = new LogReader(js, jsm, EVENT_STREAM, EVENT_SUBJECT, from_seq, 'bench', CONSUMER_PULLED_MAX, handle, mode.window);
    return { reader: r, gets: () => r.fetch_requests, detail: () => '' };
  }
  const r = new SeqLogReader(nc, jsm, EVENT_STREAM, EVENT_SUBJECT, EVENT_TIP_SUBJECT, from_seq, 'bench', mode.window, handle);
  return { reader: r, gets: () => r.counts.requests, detail: () => `${r.counts.leader_gets} leader gets, ${r.hints} hints` };
}

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + READ_MS_MAX;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`log_read bench: ${what} not done within ${READ_MS_MAX} ms`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function publishMany(js: JetStreamClient, n: number): Promise<void> {
  const body = new Uint8Array(BYTES).fill(7);
  let sent = 0;
  while (sent < n) {
    const k = Math.min(PUBLISH_WINDOW, n - sent);
    await Promise.all(Array.from({ length: k }, () => js.publish(EVENT_SUBJECT, body)));
    sent += k;
  }
}

interface CatchUp { msgs_per_s: number; cpu_us_per_msg: number; server_cpu_us_per_msg: number; gets_per_msg: number }

async function catchUp(cluster: LocalNatsCluster, nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager, mode: Mode, last: number): Promise<CatchUp> {
  let n = 0;
  // The live phases of earlier rounds stored more: only the first `last` count here.
  const r = makeReader(nc, js, jsm, mode, 1, (m) => {
    if (m.seq <= last) n++;
  });
  const cpu0 = process.cpuUsage();
  const server0 = natsServersCpuUs(cluster);
  const t0 = performance.now();
  await r.reader.start();
  await until(`${mode.name} catch-up`, () => r.reader.next_seq > last);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const server_us = natsServersCpuUs(cluster) - server0;
  await r.reader.close();
  if (n !== last) throw new Error(`log_read bench: ${mode.name} handed over ${n} of ${last}`);
  return { msgs_per_s: Math.round(last / (ms / 1000)), cpu_us_per_msg: Math.round((cpu.user + cpu.system) / last),
    server_cpu_us_per_msg: Math.round(server_us / last), gets_per_msg: r.gets() / last };
}

interface Live { p50_ms: number; p99_ms: number; gets_per_msg: number; detail: string }

async function live(nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager, mode: Mode): Promise<Live> {
  const from = (await jsm.streams.info(EVENT_STREAM)).state.last_seq + 1;
  const count = Math.max(1, Math.round(LIVE_RATE * LIVE_S));
  const sent_ms: number[] = [];
  const delays: number[] = [];
  const r = makeReader(nc, js, jsm, mode, from, (m) => {
    const i = new DataView(m.data.buffer, m.data.byteOffset).getUint32(0);
    delays.push(performance.now() - sent_ms[i]);
  });
  await r.reader.start();
  const body = new Uint8Array(BYTES);
  const t0 = performance.now();
  const acks: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const due = t0 + (i * 1000) / LIVE_RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    new DataView(body.buffer).setUint32(0, i);
    sent_ms[i] = performance.now();
    acks.push(js.publish(EVENT_SUBJECT, body.slice()));
  }
  await Promise.all(acks);
  await until(`${mode.name} live`, () => delays.length >= count);
  await r.reader.close();
  delays.sort((a, b) => a - b);
  return {
    p50_ms: Number(percentileNearestRankOfSorted(delays, 50).toFixed(2)), p99_ms: Number(percentileNearestRankOfSorted(delays, 99).toFixed(2)),
    gets_per_msg: Number((r.gets() / count).toFixed(2)), detail: r.detail(),
  };
}

async function main(): Promise<void> {
  const cluster = await LocalNatsCluster.start(3);
  const nc = await connect({ servers: cluster.urls() });
  try {
    await ensureStreams(nc, { replicas: 3 });
    const jsm = await jetstreamManager(nc, { timeout: 5000 });
    const js = jetstream(nc);
    await publishMany(js, MESSAGES);
    const last = (await jsm.streams.info(EVENT_STREAM)).state.last_seq;
    const catch_ups = new Map<string, CatchUp[]>(MODES.map((m) => [m.name, []]));
    const lives = new Map<string, Live[]>(MODES.map((m) => [m.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order: the first mode of a round reads a colder page cache.
      const order = round % 2 === 0 ? MODES : [...MODES].reverse();
      for (const mode of order) {
        const c = await catchUp(cluster, nc, js, jsm, mode, last);
        catch_ups.get(mode.name)?.push(c);
        console.error(`log_read round ${round + 1} ${mode.name}: catch-up ${c.msgs_per_s} msgs/s, ${c.cpu_us_per_msg} CPU µs/msg (servers ${c.server_cpu_us_per_msg}), ${c.gets_per_msg.toFixed(2)} gets/msg`);
      }
      if (LIVE_S > 0) {
        for (const mode of order) {
          const l = await live(nc, js, jsm, mode);
          lives.get(mode.name)?.push(l);
          console.error(`log_read round ${round + 1} ${mode.name}: live at ${LIVE_RATE}/s p50 ${l.p50_ms} ms p99 ${l.p99_ms} ms, ${l.gets_per_msg} gets/msg ${l.detail}`);
        }
      }
    }
    const med = (xs: number[]): number => medianLowerMiddle(xs);
    const result = Object.fromEntries(MODES.map((m) => {
      const c = catch_ups.get(m.name) ?? [];
      const l = lives.get(m.name) ?? [];
      return [m.name, {
        catchup_msgs_per_s: med(c.map((x) => x.msgs_per_s)), catchup_cpu_us_per_msg: med(c.map((x) => x.cpu_us_per_msg)),
        catchup_server_cpu_us_per_msg: med(c.map((x) => x.server_cpu_us_per_msg)),
        catchup_gets_per_msg: Number(med(c.map((x) => x.gets_per_msg)).toFixed(3)),
        ...(l.length === 0 ? {} : {
          live_p50_ms: med(l.map((x) => x.p50_ms)), live_p99_ms: med(l.map((x) => x.p99_ms)), live_gets_per_msg: med(l.map((x) => x.gets_per_msg)),
        }),
      }];
    }));
    console.log(JSON.stringify({
      bench: 'log_read', messages: MESSAGES, bytes: BYTES, rounds: ROUNDS, live_rate: LIVE_RATE, live_s: LIVE_S, modes: result,
    }));
  } finally {
    await nc.close();
    await cluster.stop();
  }
}

await main();
