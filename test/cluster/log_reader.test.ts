// The matcher's log reader (src/cluster/log_reader.ts) while it has no consumer: it reads by
// sequence with SeqFetcher (log_reader_seq.ts), so deleted messages are skipped as a consumer skips
// them and every other message is handed over once, in order, also the ones stored later (polls).
// Until h29c its own one-at-a-time direct gets asked for exactly next_seq, and a deleted message
// there ("none") held the reader until a consumer could be created: a matcher whose consumer
// could not be created (an election of the meta leader) stood still at the first gap.
// Real parts: a standalone nats-server on loopback whose `reader` user may read the stream by
// direct get but may not create a consumer, so the reader's by-sequence path is all there is.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { LocalNatsCluster } from '../../src/cluster/local_nats.js';
import { LogReader } from '../../src/cluster/log_reader.js';
import { waitFor } from './cluster_helpers.js';

const STREAM = 'T_LOG';
const SUBJECT = 't.log';
/** The consumer's buffer the reader would ask for (it never gets a consumer here). */
const PULLED_MAX = 64;

let nats: LocalNatsCluster;
/** Full rights: makes the stream, publishes, deletes. */
let admin: NatsConnection;
let admin_jsm: JetStreamManager;
/** Stream info and direct gets only: no CONSUMER.CREATE, no STREAM.MSG.GET. */
let reader_nc: NatsConnection;

beforeAll(async () => {
  const admin_pass = 'a-' + randomBytes(8).toString('hex');
  const reader_pass = 'r-' + randomBytes(8).toString('hex');
  const authorization = `authorization { users = [
    { user: admin, password: $RB_T_ADMIN }
    { user: reader, password: $RB_T_READER, permissions: {
      publish: { allow: ["$JS.API.INFO", "$JS.API.STREAM.INFO.${STREAM}", "$JS.API.DIRECT.GET.${STREAM}"] }
      subscribe: { allow: ["_INBOX.>"] } } }
  ] }`;
  nats = await LocalNatsCluster.start(1, 'nats-server', {
    authorization, env: { RB_T_ADMIN: admin_pass, RB_T_READER: reader_pass }, client: { user: 'admin', pass: admin_pass },
  });
  admin = await connect({ servers: nats.urls(), user: 'admin', pass: admin_pass });
  admin_jsm = await jetstreamManager(admin);
  await admin_jsm.streams.add({ name: STREAM, subjects: [SUBJECT], allow_direct: true });
  reader_nc = await connect({ servers: nats.urls(), user: 'reader', pass: reader_pass });
}, 60_000);

afterAll(async () => {
  await reader_nc?.close();
  await admin?.close();
  await nats?.stop();
});

async function publish(from: number, n: number): Promise<void> {
  const js = jetstream(admin);
  for (let i = from; i < from + n; i++) await js.publish(SUBJECT, new TextEncoder().encode(`m${i}`));
}

describe('LogReader without a consumer (the matcher while none can be created)', () => {
  it('hands over every stored message once, in order, skipping deleted ones, then the new ones', async () => {
    await publish(1, 40);
    const deleted = [3, 4, 5, 17, 40];
    for (const seq of deleted) await admin_jsm.streams.deleteMessage(STREAM, seq);
    const got: number[] = [];
    const reader_jsm = await jetstreamManager(reader_nc, { checkAPI: false });
    const reader = new LogReader(jetstream(reader_nc), reader_jsm, STREAM, SUBJECT, 2, 'test', PULLED_MAX, (m) => {
      expect(new TextDecoder().decode(m.data)).toBe(`m${m.seq}`);
      got.push(m.seq);
    });
    await reader.start();
    try {
      const expected = Array.from({ length: 39 }, (_, i) => i + 2).filter((s) => !deleted.includes(s));
      await waitFor('the stored messages past the deleted ones', 10_000, async () => (got.length >= expected.length ? true : undefined));
      expect(got).toEqual(expected);
      await publish(41, 10);
      await waitFor('the new messages', 10_000, async () => (reader.next_seq === 51 ? true : undefined));
      expect(got).toEqual([...expected, ...Array.from({ length: 10 }, (_, i) => 41 + i)]);
      // The by-sequence path was all there was: the user may not create a consumer.
      expect((await admin_jsm.streams.info(STREAM)).state.consumer_count).toBe(0);
    } finally {
      await reader.close();
    }
  }, 30_000);
});
