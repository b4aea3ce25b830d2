// The consumer-less log reader (src/cluster/log_reader_seq.ts) the gateways and DA roles read the
// event stream with: every message once, in order, from the stream by sequence; deleted messages
// skipped as a consumer skips them; new messages woken by the stream's republished headers; a
// forged hint never hands over a wrong message; a stream made without allow_direct or republish
// (before these settings) is still read (STREAM.MSG.GET, polling); a failing handler gets the
// same message again; close() ends a wait. No consumer is ever created. Before, the gateway and
// the DA role could only read through consumers (log_reader.ts), and this file did not exist.
// Real parts: a standalone nats-server on loopback (LocalNatsCluster.start(1)).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { LocalNatsCluster } from '../../src/cluster/local_nats.js';
import { addStreamPlaced, ensureStreams, EVENT_STREAM, EVENT_SUBJECT, EVENT_TIP_SUBJECT } from '../../src/cluster/log_format.js';
import { SeqLogReader, type LogMessage } from '../../src/cluster/log_reader_seq.js';
import { waitFor } from './cluster_helpers.js';

const OLD_STREAM = 'T_OLD';
const OLD_SUBJECT = 't.old';
const WINDOW = 8;
/** How long the 3-node test cluster may take to place a stream's 3 replicas after its start. */
const PLACEMENT_WAIT_MS = 15_000;

let nats: LocalNatsCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  nats = await LocalNatsCluster.start(1);
  nc = await connect({ servers: nats.urls() });
  jsm = await ensureStreams(nc, { replicas: 1 });
  await jsm.streams.add({ name: OLD_STREAM, subjects: [OLD_SUBJECT], allow_direct: false });
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

/** Publishes `n` messages whose body is their own index (1-based, across calls: `from`). */
async function publish(subject: string, from: number, n: number): Promise<void> {
  const js = jetstream(nc);
  for (let i = from; i < from + n; i++) await js.publish(subject, new TextEncoder().encode(`m${i}`));
}

const bodyOf = (m: LogMessage): string => new TextDecoder().decode(m.data);

async function consumersOf(stream: string): Promise<number> {
  return (await jsm.streams.info(stream)).state.consumer_count;
}

describe('SeqLogReader: a stream read by sequence without a consumer', () => {
  it('hands over every message once, in order, skipping deleted ones; new ones arrive after a hint', async () => {
    await publish(EVENT_SUBJECT, 1, 40);
    for (const seq of [3, 4, 5, 17, 40]) await jsm.streams.deleteMessage(EVENT_STREAM, seq);
    const got: number[] = [];
    const reader = new SeqLogReader(nc, jsm, EVENT_STREAM, EVENT_SUBJECT, EVENT_TIP_SUBJECT, 2, 'test', WINDOW, (m) => {
      expect(bodyOf(m)).toBe(`m${m.seq}`);
      got.push(m.seq);
    });
    await reader.start();
    try {
      const expected = Array.from({ length: 39 }, (_, i) => i + 2).filter((s) => ![3, 4, 5, 17, 40].includes(s));
      await waitFor('the stored messages', 10_000, async () => (got.length >= expected.length ? true : undefined));
      expect(got).toEqual(expected);
      await publish(EVENT_SUBJECT, 41, 10);
      await waitFor('the new messages', 10_000, async () => (reader.next_seq === 51 ? true : undefined));
      expect(got).toEqual([...expected, ...Array.from({ length: 10 }, (_, i) => 41 + i)]);
      expect(reader.hints).toBeGreaterThanOrEqual(10);
      expect(await consumersOf(EVENT_STREAM)).toBe(0);
    } finally {
      await reader.close();
    }
  }, 30_000);

  it('a forged hint hands over no wrong message: the data comes from the stream', async () => {
    const last = (await jsm.streams.info(EVENT_STREAM)).state.last_seq;
    const got: LogMessage[] = [];
    const reader = new SeqLogReader(nc, jsm, EVENT_STREAM, EVENT_SUBJECT, EVENT_TIP_SUBJECT, last + 1, 'test', WINDOW, (m) => {
      got.push(m);
    });
    await reader.start();
    try {
      const forged = headers();
      forged.set('Nats-Sequence', String(last + 1_000_000));
      for (let i = 0; i < 5; i++) nc.publish(EVENT_TIP_SUBJECT, new TextEncoder().encode('forged'), { headers: forged });
      nc.publish(EVENT_TIP_SUBJECT, new TextEncoder().encode('no header'));
      await waitFor('the forged hints seen', 10_000, async () => (reader.hints >= 6 ? true : undefined));
      expect(got).toEqual([]);
      // Each forged hint cost at most one window of gets.
      expect(reader.counts.requests).toBeLessThanOrEqual(6 * WINDOW + 200);
      await publish(EVENT_SUBJECT, last + 1, 2);
      await waitFor('the real messages', 10_000, async () => (got.length >= 2 ? true : undefined));
      expect(got.map((m) => [m.seq, bodyOf(m)])).toEqual([[last + 1, `m${last + 1}`], [last + 2, `m${last + 2}`]]);
    } finally {
      await reader.close();
    }
  }, 30_000);

  it('a stream made without allow_direct or republish is read through STREAM.MSG.GET, polling', async () => {
    await publish(OLD_SUBJECT, 1, 20);
    await jsm.streams.deleteMessage(OLD_STREAM, 7);
    const got: number[] = [];
    const reader = new SeqLogReader(nc, jsm, OLD_STREAM, OLD_SUBJECT, null, 1, 'test', WINDOW, (m) => {
      got.push(m.seq);
    });
    await reader.start();
    try {
      await waitFor('the stored messages', 10_000, async () => (got.length >= 19 ? true : undefined));
      await publish(OLD_SUBJECT, 21, 3);
      await waitFor('the new messages by polling', 10_000, async () => (reader.next_seq === 24 ? true : undefined));
      expect(got).toEqual(Array.from({ length: 23 }, (_, i) => i + 1).filter((s) => s !== 7));
      expect(await consumersOf(OLD_STREAM)).toBe(0);
    } finally {
      await reader.close();
    }
  }, 30_000);

  it('a stream whose allow_direct was set by an update (a 2.9.10 cluster accepts it, its direct gets go unanswered) is read through STREAM.MSG.GET', async () => {
    const cluster = await LocalNatsCluster.start(3);
    const c_nc = await connect({ servers: cluster.urls() });
    try {
      const c_jsm = await jetstreamManager(c_nc, { timeout: 1000 });
      // A cluster just started may not place 3 replicas yet (CI: "no suitable peers for placement").
      await addStreamPlaced(c_jsm, { name: 'T_UPD', subjects: ['t.upd'], num_replicas: 3, allow_direct: false }, Date.now() + PLACEMENT_WAIT_MS);
      for (let i = 0; i < 5; i++) await jetstream(c_nc).publish('t.upd', new Uint8Array(8));
      await c_jsm.streams.update('T_UPD', { allow_direct: true });
      const got: number[] = [];
      const reader = new SeqLogReader(c_nc, c_jsm, 'T_UPD', 't.upd', null, 1, 'test', WINDOW, (m) => {
        got.push(m.seq);
      });
      await reader.start();
      try {
        await waitFor('the stored messages', 20_000, async () => (got.length >= 5 ? true : undefined));
        expect(got).toEqual([1, 2, 3, 4, 5]);
      } finally {
        await reader.close();
      }
    } finally {
      await c_nc.close();
      await cluster.stop();
    }
  }, 60_000);

  it('a handler that fails gets the same message again; close() ends a wait', async () => {
    const seen: number[] = [];
    let failures = 2;
    const reader = new SeqLogReader(nc, jsm, EVENT_STREAM, EVENT_SUBJECT, EVENT_TIP_SUBJECT, 1, 'test', WINDOW, (m) => {
      seen.push(m.seq);
      if (m.seq === 2 && failures-- > 0) throw new Error('store busy');
    });
    await reader.start();
    await waitFor('a few messages', 10_000, async () => (reader.next_seq > 6 ? true : undefined));
    await reader.close();
    expect(seen.slice(0, 4)).toEqual([1, 2, 2, 2]);
    expect(seen.slice(4, 6)).toEqual([6, 7]);
    // Closed: nothing further is handed over.
    const n = seen.length;
    await publish(EVENT_SUBJECT, 1000, 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(seen.length).toBe(n);
  }, 30_000);
});
