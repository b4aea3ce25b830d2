// Local engine snapshots of the cluster matcher (docs/scale-out.md, "Disk, restarts and
// trimming"; src/cluster/matcher_snapshots.ts), on a real 3-node JetStream cluster with matcher
// and gateway roles as real processes, each matcher on a data dir of the test's:
// - a standby killed -9 and restarted on its data dir resumes from its newest snapshot (checked
//   against the event stream's header of that batch), not from sequence 1, and then agrees with
//   the leader on the next batches (no mismatch, same state root);
// - a truncated newest snapshot is passed over with a log line: the next older one is used;
// - a leader fenced out (a forged batch in the stream takes the place of its next one, as in
//   cluster.test.ts) starts over from its own newest snapshot, not from genesis, and agrees again.
// The tests share one cluster and run in order. Waits are bounded; no assertion on how fast.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { parse } from 'yaml';
import { sendBatchRequest } from '../../src/cluster/batch_request.js';
import { listSnapshots } from '../../src/snapshot/snapshot_file.js';
import { adminState, api, type StartedServer, type Wallet } from '../server/harness.js';
import { Validator } from '../openapi/validate.js';
import {
  fundedWallet, publishForgedBatch, leadingFromGenesis, LEASE_TTL_MS, MARKET, matcherStatus, P, settledMatchers, startTestCluster, TICK, waitFor, type TestCluster,
} from './cluster_helpers.js';

/** A snapshot every 3 batches (the role's variable), so a few requests make several. */
const EVERY_BATCHES = 3;
const WAIT_MS = 20 * LEASE_TTL_MS;

let c: TestCluster;
let nc: NatsConnection;
let root = '';
/** Each matcher's data dir (kept across its restarts). */
const dirs = new Map<string, string>();
let wallets: Wallet[] = [];
/** Gateways replaced by a restart on their data dir (stopped last: stopping one removes its data dir). */
const retired: StartedServer[] = [];
const GATEWAY_ENV = { RINGBOOK_GATEWAY_SNAPSHOT_EVERY_BATCHES: String(EVERY_BATCHES) };
let orders_sent = 0;

function matcherEnv(id: string): Record<string, string> {
  // No admin token or operator key from the environment (the harness and the cluster helpers give
  // both): a matcher uses neither, and must not make them in its data dir (the test below).
  return {
    RINGBOOK_DATA_DIR: dirs.get(id) as string, RINGBOOK_MATCHER_SNAPSHOT_EVERY_BATCHES: String(EVERY_BATCHES),
    RINGBOOK_ADMIN_TOKEN: '', RINGBOOK_OPERATOR_KEY: '',
  };
}

function snapshotsOf(id: string): { batch_id: number; file: string }[] {
  return listSnapshots(path.join(dirs.get(id) as string, 'matcher'));
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-matcher-snapshot-'));
  for (const id of ['m1', 'm2']) {
    const d = path.join(root, id);
    fs.mkdirSync(d);
    dirs.set(id, d);
  }
  c = await startTestCluster();
  await leadingFromGenesis(await c.startMatcher('m1', matcherEnv('m1')));
  const [, g] = await Promise.all([c.startMatcher('m2', matcherEnv('m2')), c.startGateway('g1', undefined, GATEWAY_ENV)]);
  wallets = [await fundedWallet(g), await fundedWallet(g)];
  nc = await connect({ servers: c.nats.urls() });
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await c?.stop();
  for (const g of retired) await g.stop('SIGKILL');
  if (root !== '') fs.rmSync(root, { recursive: true, force: true });
});

it('a matcher role writes no admin token or operator key into its data dir: it uses neither', () => {
  // Neither comes from the environment here (matcherEnv): before, each matcher generated both and
  // left them in its data dir (and logged the admin token).
  for (const id of ['m1', 'm2']) {
    const names = fs.readdirSync(dirs.get(id) as string);
    expect(names, id).not.toContain('admin_token');
    expect(names, id).not.toContain('operator_key');
    expect(names, id).toContain('matcher');
  }
});

/** `n` orders through the gateway (each a batch or part of one): resting bids and a crossing ask, so there are fills. */
async function trade(n: number): Promise<void> {
  const g = c.gateways[0];
  for (let i = 0; i < n; i++, orders_sent++) {
    const w = wallets[orders_sent % 2];
    const side = orders_sent % 4 === 3 ? 'ask' : 'bid';
    const price = side === 'ask' ? P - 10 * TICK : P - (1 + (orders_sent % 7)) * TICK;
    const r = await api(g.url).post('/orders', w.order({ market_id: MARKET, side, price, quantity: 100 }));
    if (r.status !== 200) throw new Error(`order refused: ${r.status} ${r.text}`);
  }
}

/** Orders until matcher `id` has written a snapshot of at least batch `batch_id`. */
async function untilSnapshot(id: string, batch_id: number): Promise<void> {
  await waitFor(`${id}'s snapshot of batch ${batch_id} or later`, WAIT_MS, async () => {
    const s = await matcherStatus(c.matchers.get(id) as StartedServer);
    if (s.snapshot_batch_id >= batch_id) return s;
    await trade(1);
    return undefined;
  }, 50);
}

/** Kills `id` (-9) and starts it again on its data dir. */
async function restart(id: string, damage: () => void = () => undefined): Promise<StartedServer> {
  await (c.matchers.get(id) as StartedServer).stop('SIGKILL');
  damage();
  return c.startMatcher(id, matcherEnv(id));
}

/** More batches, then every matcher on the same last batch and state root, with no mismatch. */
async function agreeAfterMoreBatches(): Promise<void> {
  await trade(2 * EVERY_BATCHES);
  const s = await settledMatchers([...c.matchers.values()], WAIT_MS);
  expect(s.map((x) => x.state_root)).toEqual(s.map(() => s[0].state_root));
  expect(s[0].state_root).toMatch(/^0x[0-9a-f]{64}$/);
  for (const x of s) expect(x.mismatches, `${x.node_id} mismatches`).toBe(0);
}

describe('cluster matcher snapshots', () => {
  it('a standby restarted on its data dir resumes from its newest snapshot and agrees with the leader', async () => {
    await untilSnapshot('m2', 3 * EVERY_BATCHES);
    const files = snapshotsOf('m2');
    expect(files.length).toBeGreaterThanOrEqual(2);
    const m2 = await restart('m2');
    const s = await matcherStatus(m2);
    expect(s.resumed_from_batch_id).toBe(files[0].batch_id);
    expect(s.resumed_from_batch_id).toBeGreaterThan(0);
    expect(m2.output().stdout).toContain(`resuming from snapshot of batch ${files[0].batch_id}`);
    await agreeAfterMoreBatches();
  });

  it('a truncated newest snapshot is passed over with a log line: the next older one is resumed from', async () => {
    await untilSnapshot('m2', (await matcherStatus(c.matchers.get('m2') as StartedServer)).batch_id + EVERY_BATCHES);
    const files = snapshotsOf('m2');
    expect(files.length).toBeGreaterThanOrEqual(2);
    const m2 = await restart('m2', () => {
      const bytes = fs.readFileSync(files[0].file);
      fs.writeFileSync(files[0].file, bytes.subarray(0, bytes.length >> 1));
    });
    const s = await matcherStatus(m2);
    expect(s.resumed_from_batch_id).toBe(files[1].batch_id);
    expect(m2.output().stderr).toContain(`snapshot ${files[0].file} passed over`);
    await agreeAfterMoreBatches();
  });

  it('a leader fenced out by a batch it did not write starts over from its newest snapshot, not genesis, and agrees again', async () => {
    const m1 = c.matchers.get('m1') as StartedServer;
    expect((await matcherStatus(m1)).role).toBe('leader');
    await untilSnapshot('m1', (await matcherStatus(m1)).batch_id + EVERY_BATCHES);
    // A forged batch after the last: the leader's next batch has its number (so its message id)
    // and is refused as a duplicate of another leader's batch: the leader rebuilds.
    const { last: h, forged } = await publishForgedBatch(nc);
    const kept = snapshotsOf('m1').map((f) => f.batch_id).filter((b) => b <= h.batch_id);
    expect(kept.length).toBeGreaterThan(0);
    await waitFor('the fenced leader to rebuild', WAIT_MS, async () => {
      if (m1.output().stderr.includes('rebuilding from the event stream as a standby')) return true;
      const e = sendBatchRequest(nc, { gateway: 'snapshot-test', after_batch_id: h.batch_id });
      if (e !== null) throw e;
      return undefined;
    }, 50);
    const s = await waitFor('the rebuilt matcher past the forged batch', WAIT_MS, async () => {
      const x = await matcherStatus(m1);
      return x.batch_id >= forged.batch_id ? x : undefined;
    });
    expect(kept).toContain(s.resumed_from_batch_id);
    expect(m1.output().stdout).toContain(`resuming from snapshot of batch ${s.resumed_from_batch_id}`);
    // Everyone re-executed the forged batch alike (each counted it as a mismatch): same roots after it.
    await trade(2 * EVERY_BATCHES);
    const all = await settledMatchers([...c.matchers.values()], WAIT_MS);
    expect(all.map((x) => x.state_root)).toEqual(all.map(() => all[0].state_root));
  });

  it('a gateway killed -9 and restarted on its data dir resumes from its newest snapshot, not sequence 1, and answers as before', async () => {
    const g = c.gateways[0];
    const dir = path.join(g.data_dir, 'gateway');
    const admin = (x: StartedServer): Promise<{ batch_id: string; recovery: Record<string, number | null> }> => adminState(x);
    // docs/openapi.yaml's AdminState, its `recovery` with the gateway's stream position.
    const spec = parse(fs.readFileSync(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;
    await trade(2 * EVERY_BATCHES);
    await waitFor('a gateway snapshot', WAIT_MS, async () => (listSnapshots(dir).length > 0 ? true : undefined));
    // Past a snapshot's batch, so the restart reads batches after it from the stream (bounded: every 3rd is one).
    for (let i = 0; i < EVERY_BATCHES && Number((await admin(g)).batch_id) % EVERY_BATCHES === 0; i++) await trade(1);
    const before = await answers(g);
    // Not an empty exchange: orders, fills and trades to compare.
    for (const i of [0, 3, 4]) expect((before[i] as unknown[]).length, `answer ${i}`).toBeGreaterThan(0);
    const batch_id = Number((await admin(g)).batch_id);
    g.proc.kill('SIGKILL');
    await new Promise((r) => g.proc.once('exit', r));
    const newest = listSnapshots(dir)[0].batch_id;
    expect(newest).toBeLessThan(batch_id);
    const g2 = await c.startGateway('g1r', undefined, {
      ...GATEWAY_ENV, RINGBOOK_DATA_DIR: g.data_dir, RINGBOOK_CONFIG: path.join(g.data_dir, 'test-config.json'),
    });
    retired.push(...c.gateways.splice(0, 1));
    const state = await admin(g2);
    const { recovery } = state;
    expect(recovery).toMatchObject({ snapshot_batch_id: newest, batch_id, replayed_batches: batch_id - newest });
    expect(recovery.events_through).toBeGreaterThan(1);
    expect(new Validator(spec).validate(state, { $ref: '#/components/schemas/AdminState' })).toEqual([]);
    expect(g2.output().stdout).toContain(`resuming from snapshot of batch ${newest}`);
    expect(await answers(g2)).toEqual(before);
    // It serves on; a clean stop writes a snapshot of its last batch.
    await trade(1);
    const last = Number((await admin(g2)).batch_id);
    g2.proc.kill('SIGTERM');
    await new Promise((r) => g2.proc.once('exit', r));
    expect(listSnapshots(dir)[0].batch_id).toBe(last);
  });
});

/** What a gateway answers from its read model and market data: both wallets' balances, orders and fills, the market's trades and book. */
async function answers(g: StartedServer): Promise<unknown[]> {
  const paths = [`/trades/${MARKET}`, `/orderbook/${MARKET}`];
  for (const w of wallets) for (const p of ['balances', 'orders?status=all&limit=1000', 'fills']) paths.push(`/account/${w.address}/${p}`);
  const out: unknown[] = [];
  for (const p of paths) {
    const r = await api(g.url).get(p);
    if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${r.text}`);
    out.push(r.body.data);
  }
  return out;
}
