// ensureStreams on a cluster that cannot place the streams' replicas (src/cluster/log_format.ts):
// JetStream answers "no suitable peers for placement" (err_code 10005) while fewer servers are up
// and known than the replicas, as a cluster still forming does for a moment (a CI run had a role
// exit on it at start). On real nats-server processes: the creation is tried again until the bound,
// not given up at the first refusal, then fails saying why. (A killed node does not reproduce the
// forming cluster's refusal: nats-server keeps placing R3 streams on an offline peer, tried here.)
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalNatsCluster } from '../../src/cluster/local_nats.js';
import { ensureStreams, EVENT_STREAM, REQUEST_STREAM } from '../../src/cluster/log_format.js';

describe('ensureStreams while the cluster cannot place the replicas', () => {
  let nats: LocalNatsCluster;
  let nc: NatsConnection;
  /** A second connection that sees every stream creation request (JetStream's API is plain subjects). */
  let watch: NatsConnection;
  const creates: string[] = [];

  beforeAll(async () => {
    nats = await LocalNatsCluster.start(3);
    await nats.waitForJetStream();
    nc = await connect({ servers: [nats.urls()[0]], reconnect: false });
    watch = await connect({ servers: [nats.urls()[0]], reconnect: false });
    watch.subscribe('$JS.API.STREAM.CREATE.>', { callback: (_e, m) => { creates.push(m.subject.slice('$JS.API.STREAM.CREATE.'.length)); } });
    await watch.flush();
  }, 60_000);

  afterAll(async () => {
    await watch?.close();
    await nc?.close();
    await nats?.stop();
  });

  /** The creation requests seen so far (after a round trip of the watcher, so the last ones are in). */
  async function createsSeen(): Promise<string[]> {
    await nc.flush();
    await watch.flush();
    return creates.splice(0);
  }

  it('retries a placement the cluster refuses until its bound, then fails saying why', async () => {
    await createsSeen();
    const started = Date.now();
    await expect(ensureStreams(nc, { replicas: 5 }, 1_500)).rejects.toThrow(/no suitable peers/i);
    const waited_ms = Date.now() - started;
    // Retried, not failed at the first refusal: counted in creation requests (the first stream's,
    // none for the second), and for as long as the bound (a lower bound: load only lengthens it;
    // the test's timeout bounds the rest).
    const seen = await createsSeen();
    expect(seen.length, `creation requests: ${seen.join(', ')}`).toBeGreaterThanOrEqual(2);
    expect(new Set(seen)).toEqual(new Set([REQUEST_STREAM]));
    expect(waited_ms).toBeGreaterThanOrEqual(1_400);
  }, 30_000);

  it('creates both streams at once when the cluster can place them', async () => {
    await createsSeen();
    const jsm = await ensureStreams(nc, { replicas: 3 }, 30_000);
    // At once: one creation request per stream, none refused and retried (not a clock bound).
    expect(await createsSeen()).toEqual([REQUEST_STREAM, EVENT_STREAM]);
    for (const name of [REQUEST_STREAM, EVENT_STREAM]) {
      expect((await jsm.streams.info(name)).config.num_replicas).toBe(3);
    }
  }, 60_000);
});
