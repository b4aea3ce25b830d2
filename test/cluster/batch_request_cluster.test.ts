// A gateway's request for a batch reaches the leader matcher (src/cluster/batch_request.ts), on a
// real 3-node JetStream cluster with matcher roles as real processes: on an otherwise idle exchange
// the leader cuts one empty batch for it (the standby re-executes it to the same root, and ignores
// the request itself); a flood of requests, hostile ones among them, costs at most one empty batch
// per second; a request lost with the leader (kill -9, no leader yet) is answered once the new
// leader hears it asked again, as the chain link asks each round; and a matcher started afterwards
// re-executes every such batch to the same root. The messages are the gateway's own
// (batchRequestHeaders); the whole gateway path, chain link included, is
// test/settlement/chain_link_refused_cluster.test.ts.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_REQUEST_SPACING_MS, BATCH_REQUEST_SUBJECT, batchRequestHeaders } from '../../src/cluster/batch_request.js';
import { EVENT_STREAM, readBatchHeader, type BatchHeader } from '../../src/cluster/log_format.js';
import type { MatcherStatus } from '../../src/cluster/matcher_role.js';
import type { StartedServer } from '../server/harness.js';
import { leadingFromGenesis, matcherStatus, settledMatchers, startTestCluster, waitFor, type TestCluster } from './cluster_helpers.js';

let c: TestCluster;
let nc: NatsConnection;
let m1: StartedServer;
let m2: StartedServer;

beforeAll(async () => {
  c = await startTestCluster();
  m1 = await c.startMatcher('m1');
  await leadingFromGenesis(m1);
  m2 = await c.startMatcher('m2');
  await settledMatchers([m1, m2], 10_000);
  nc = await connect({ servers: c.nats.urls(), name: 'batch-request-test' });
}, 60_000);

afterAll(async () => {
  await nc?.drain();
  await c?.stop();
});

function ask(after_batch_id: number, gateway = 'g1'): void {
  nc.publish(BATCH_REQUEST_SUBJECT, new Uint8Array(0), { headers: batchRequestHeaders({ gateway, after_batch_id }) });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The leader's status after `ms` in which its last batch did not move (the exchange is idle). */
async function idleFor(m: StartedServer, ms: number): Promise<MatcherStatus> {
  const before = await matcherStatus(m);
  await sleep(ms);
  const after = await matcherStatus(m);
  expect(after.batch_id, 'no batch while idle').toBe(before.batch_id);
  return after;
}

describe('a gateway asks the leader matcher for a batch', () => {
  it('on an idle exchange the leader cuts one empty batch for it; the standby ignores the request and re-executes the batch', async () => {
    const idle = await idleFor(m1, 700);
    expect(idle.role).toBe('leader');
    ask(idle.batch_id);
    const next = await waitFor('the requested batch', 3_000, async () => {
      const s = await matcherStatus(m1);
      return s.batch_id > idle.batch_id ? s : undefined;
    });
    expect(next.batch_id).toBe(idle.batch_id + 1);
    expect(next.batches_cut).toBe(idle.batches_cut + 1);
    expect(next.requests_through).toBe(idle.requests_through);
    expect(next.batch_requests).toMatchObject({ received: 1, empty_batches: 1, refused: 0, ignored_standby: 0, ignored_answered: 0 });
    // One request, one batch: nothing more comes of it.
    await idleFor(m1, 1_500);
    const [s1, s2] = await settledMatchers([m1, m2], 5_000);
    expect(s2.role).toBe('standby');
    expect(s2.state_root).toBe(s1.state_root);
    expect(s2.mismatches).toBe(0);
    expect(s2.batch_requests).toMatchObject({ received: 1, ignored_standby: 1, empty_batches: 0 });
    // A late duplicate (the gateway's last batch is behind the leader's): answered already, no batch.
    ask(idle.batch_id);
    await waitFor('the duplicate heard', 2_000, async () => ((await matcherStatus(m1)).batch_requests.ignored_answered === 1 ? true : undefined));
    await idleFor(m1, 1_200);
  }, 30_000);

  it('a flood of requests, hostile ones among them, costs at most one empty batch per second', async () => {
    const before = await matcherStatus(m1);
    const FLOOD_MS = 2_500;
    const started = Date.now();
    let sent = 0;
    let malformed = 0;
    while (Date.now() - started < FLOOD_MS) {
      for (let i = 0; i < 20; i++) {
        // An Rb-After-Batch far ahead: never "answered already", only the spacing holds it.
        ask(2 ** 53 - 1, 'flooder');
        sent++;
      }
      const bad = headers();
      bad.set('Rb-Batch-Request-Version', '1');
      bad.set('Rb-Gateway', 'flooder');
      bad.set('Rb-After-Batch', '9'.repeat(40));
      nc.publish(BATCH_REQUEST_SUBJECT, new Uint8Array(0), { headers: bad });
      nc.publish(BATCH_REQUEST_SUBJECT, new Uint8Array([1, 2, 3]));
      malformed += 2;
      await sleep(5);
    }
    const flood_ms = Date.now() - started;
    await nc.flush();
    const heard = await waitFor('every request heard', 5_000, async () => {
      const s = await matcherStatus(m1);
      return s.batch_requests.received - before.batch_requests.received === sent + malformed ? s : undefined;
    });
    // Every request was heard by now: the leader's processing lag (a loaded machine) is inside.
    const heard_ms = Date.now() - started;
    // Settle what waited at the end, then nothing more.
    await sleep(BATCH_REQUEST_SPACING_MS + 200);
    const after = await idleFor(m1, 1_200);
    const empty = after.batch_requests.empty_batches - before.batch_requests.empty_batches;
    const batches = after.batch_id - before.batch_id;
    console.log(`batch request flood: ${sent} requests and ${malformed} malformed over ${flood_ms} ms (all heard by ${heard_ms} ms) -> ${batches} batches ` +
      `(${empty} empty for requests; spacing ${BATCH_REQUEST_SPACING_MS} ms)`);
    expect(heard.batch_requests.refused - before.batch_requests.refused).toBe(malformed);
    expect(batches).toBe(empty);
    expect(batches).toBeGreaterThanOrEqual(2);
    // One at the start, one per spacing while requests were heard, one for what waited at the end.
    expect(batches).toBeLessThanOrEqual(Math.floor(heard_ms / BATCH_REQUEST_SPACING_MS) + 2);
    // In the log: empty batches, their times (the leader's clock, written in each) a spacing apart.
    const jsm = await jetstreamManager(nc);
    const cut: BatchHeader[] = [];
    for (let seq = before.events_through + 1; seq <= after.events_through; seq++) {
      const m = await jsm.streams.getMessage(EVENT_STREAM, { seq });
      if (m === null) throw new Error(`event stream: no message at ${seq}`);
      cut.push(readBatchHeader(m.header, m.data.length));
    }
    expect(cut.map((h) => h.batch_id)).toEqual(Array.from({ length: batches }, (_, k) => before.batch_id + 1 + k));
    for (const h of cut) expect(h.input_records).toBe(0);
    for (let k = 1; k < cut.length; k++) expect(cut[k].time_ms - cut[k - 1].time_ms).toBeGreaterThanOrEqual(BATCH_REQUEST_SPACING_MS);
    const [s1, s2] = await settledMatchers([m1, m2], 5_000);
    expect(s2.state_root).toBe(s1.state_root);
    expect(s2.mismatches).toBe(0);
  }, 30_000);

  it('a request lost with the leader (kill -9) is answered by the new leader when asked again; a new matcher re-executes every batch to the same root', async () => {
    const idle = await idleFor(m1, 300);
    const standby_heard = (await matcherStatus(m2)).batch_requests.ignored_standby;
    m1.proc.kill('SIGKILL');
    c.matchers.delete('m1');
    // No leader yet: m2 is a standby and ignores it.
    ask(idle.batch_id);
    await waitFor('m2 to hear it as a standby', 2_000, async () => {
      const s = await matcherStatus(m2);
      return s.batch_requests.ignored_standby === standby_heard + 1 && s.role === 'standby' ? true : undefined;
    });
    const led = await waitFor('m2 to lead', 5_000, async () => {
      const s = await matcherStatus(m2);
      return s.role === 'leader' ? s : undefined;
    });
    // The new leader cuts nothing by itself: the request was lost.
    await sleep(700);
    expect((await matcherStatus(m2)).batch_id).toBe(idle.batch_id);
    expect(led.batch_id).toBe(idle.batch_id);
    // Asked again each round (the chain link's poll), as long as no batch came.
    let asks = 0;
    const answered = await waitFor('the new leader\'s batch', 5_000, async () => {
      const s = await matcherStatus(m2);
      if (s.batch_id > idle.batch_id) return s;
      ask(idle.batch_id);
      asks++;
      return undefined;
    }, 200);
    expect(answered.batch_id).toBe(idle.batch_id + 1);
    expect(answered.batch_requests.empty_batches).toBe(1);
    expect(asks).toBeGreaterThanOrEqual(1);
    await idleFor(m2, 1_200);
    // Every requested empty batch, m1's and m2's, re-executed from genesis by a matcher started now.
    const m3 = await c.startMatcher('m3');
    const [s2, s3] = await settledMatchers([m2, m3], 15_000);
    expect(s3.batch_id).toBe(answered.batch_id);
    expect(s3.state_root).toBe(s2.state_root);
    expect(s3.mismatches).toBe(0);
  }, 40_000);
});
