// The leader matcher's store fault reaches the gateways (docs/scale-out.md, "The leader's status
// message"): on a real 3-node JetStream cluster with matcher and gateway roles as real processes,
// the leader's batch store is failed with the single process's journal seam
// (RINGBOOK_TEST_JOURNAL_FAULT_FILE, as test/journal/faults.test.ts). While it fails every gateway
// answers GET /health 503 OVERLOADED (both listeners; one started during the fault too), shows
// the fault in GET /admin/state `journal` and ringbook_journal_failing, refuses orders, deposits
// and cancels with 503 and applies nothing of them; the order in the failing batch is answered
// only once it is stored (with the seam's fsync, a batch stored but reported failed: answered from
// the stream, the leader's retry recognises it as its own). Health turns 200 again when the leader's retry lands, and when a
// standby takes over from a failing leader killed -9.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, adminState, api, type ApiResponse, type StartedServer, type Wallet } from '../server/harness.js';
import { healthListener } from '../server/health_port.js';
import { metricValue } from '../server/metrics_scrape.js';
import {
  fundedWallet, leadingFromGenesis, MARKET, matcherStatus, orderIdsOf, P, startTestCluster, TICK, waitFor, type TestCluster,
} from './cluster_helpers.js';

let c: TestCluster;
let dir = '';
let fault_file = '';
/** Short, so the test sees the fault soon; the production default (10 s) rides out NATS elections. */
const STORE_FAULT_AFTER_MS = 300;
const HEALTH = { server: { health_port: 0 } };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-store-fault-'));
  fault_file = path.join(dir, 'fault');
  c = await startTestCluster();
  const m1 = await c.startMatcher('m1', { RINGBOOK_TEST_JOURNAL_FAULT_FILE: fault_file, RINGBOOK_STORE_FAULT_AFTER_MS: String(STORE_FAULT_AFTER_MS) });
  await leadingFromGenesis(m1);
  // m2: a standby without the seam (it takes over in the last test).
  await Promise.all([c.startMatcher('m2'), c.startGateway('g1', HEALTH)]);
}, 60_000);

afterAll(async () => {
  await c?.stop();
  if (dir !== '') fs.rmSync(dir, { recursive: true, force: true });
});

/** Resolves with the answer, or with 'pending' if none came within `ms`. */
async function within(p: Promise<ApiResponse>, ms: number): Promise<ApiResponse | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);
}

const bid = (w: Wallet, ticks: number): Record<string, unknown> => w.order({ market_id: MARKET, side: 'bid', price: P - ticks * TICK, quantity: 100 });

async function healthOf(g: StartedServer, status: number): Promise<ApiResponse> {
  return waitFor(`GET /health ${status} on ${g.url}`, 5_000, async () => {
    const h = await api(g.url).get('/health');
    return h.status === status ? h : undefined;
  });
}

/** A gateway while the leader's store fails: 503 health with a public reason, the journal failing, writes refused, nothing applied. */
async function checkRefusing(g: StartedServer, w: Wallet, faults: number, fault_ms: number): Promise<void> {
  const a = api(g.url);
  const h = await healthOf(g, 503);
  expect(h.body).toMatchObject({ ok: false, error: 'OVERLOADED' });
  expect(h.body.message).toMatch(/^unhealthy: the journal cannot write since \d{4}-\d\d-\d\dT[\d:.]+Z: writes are refused .*GET \/admin\/state journal$/);
  const since_ms = Date.parse(/since (\S+):/.exec(h.body.message as string)![1]);
  expect(since_ms).toBeGreaterThanOrEqual(fault_ms);
  const hl = await healthListener(g);
  expect(hl.status).toBe(503);
  expect(hl.body).toMatchObject({ ok: false, error: 'OVERLOADED', message: h.body.message });
  const st = await adminState(g);
  expect(st.journal).toMatchObject({ status: 'failing', failing_since_ms: since_ms, recovered_at_ms: null, faults });
  // The batch the leader holds is the one after the last the gateway has.
  expect(st.journal.failing_batch_id).toBe(Number(st.batch_id) + 1);
  expect(st.journal.last_error).toContain('injected write failure');
  expect(h.body.message).not.toContain(st.journal.last_error);
  expect(await metricValue(g, 'ringbook_journal_failing')).toBe(1);
  expect(await metricValue(g, 'ringbook_journal_faults_total')).toBe(faults);

  const balances = (await a.get(`/account/${w.address}/balances`)).body.data;
  const orders = await orderIdsOf(g, w.address);
  const refused = await a.post('/orders', bid(w, 50));
  expect(refused.status).toBe(503);
  expect(refused.body).toMatchObject({ ok: false, error: 'OVERLOADED', message: expect.stringContaining('journal cannot write') });
  const dep = await a.post('/deposit', { user: w.address, asset: 'USDC', amount: '1' }, adminHeaders(g));
  expect(dep.status).toBe(503);
  const cancel = await a.post('/orders/cancel', w.cancel({ order_id: String(orders[0]) }));
  expect(cancel.status).toBe(503);
  // Nothing of the refused writes reached the log; reads are served.
  expect((await a.get(`/account/${w.address}/balances`)).body.data).toEqual(balances);
  expect(await orderIdsOf(g, w.address)).toEqual(orders);
  expect((await adminState(g)).batch_id).toBe(st.batch_id);
  expect((await a.get('/markets')).status).toBe(200);
}

async function checkRecovered(g: StartedServer, faults: number): Promise<void> {
  const h = await healthOf(g, 200);
  expect(h.body.data.status).toBe('ok');
  expect((await healthListener(g)).status).toBe(200);
  const j = (await adminState(g)).journal;
  expect(j).toMatchObject({ status: 'ok', failing_since_ms: null, failing_batch_id: null, faults });
  expect(j.recovered_at_ms).toBeGreaterThanOrEqual(j.last_error_at_ms);
  expect(await metricValue(g, 'ringbook_journal_failing')).toBe(0);
  expect(await metricValue(g, 'ringbook_journal_faults_total')).toBe(faults);
}

describe('the leader matcher cannot store its batches', () => {
  let w: Wallet;

  it('the gateways refuse writes and answer /health 503 while it fails, and turn back once the retry lands', async () => {
    const g1 = c.gateways[0];
    const m1 = c.matchers.get('m1')!;
    const a = api(g1.url);
    w = await fundedWallet(g1);
    expect((await a.post('/orders', bid(w, 1))).status).toBe(200);
    expect((await a.get('/health')).status).toBe(200);
    expect((await adminState(g1)).journal).toEqual({
      status: 'ok', failing_since_ms: null, failing_batch_id: null, last_error: null, last_error_batch_id: null,
      last_error_at_ms: null, recovered_at_ms: null, faults: 0,
    });
    expect((await matcherStatus(m1)).store_fault).toBeNull();

    const fault_ms = Date.now();
    fs.writeFileSync(fault_file, 'write');
    const pending = a.post('/orders', bid(w, 2));
    expect(await within(pending, 1500)).toBe('pending');
    await checkRefusing(g1, w, 1, fault_ms);
    const ms = await matcherStatus(m1);
    expect(ms.store_fault).toMatchObject({ batch_id: ms.batch_id + 1, message: expect.stringContaining('injected write failure') });
    expect(m1.output().stderr).toMatch(/batch \d+ not stored for \d+ ms .*the gateways refuse writes with 503/);
    expect(g1.output().stderr).toMatch(/journal write of batch \d+ failed .*refusing new writes with 503/);

    // A gateway started during the fault learns it from the leader's next renewal.
    const g2 = await c.startGateway('g2', HEALTH);
    await checkRefusing(g2, w, 1, fault_ms);

    fs.rmSync(fault_file);
    const answered = await within(pending, 10_000);
    expect(answered).not.toBe('pending');
    expect((answered as ApiResponse).status).toBe(200);
    await checkRecovered(g1, 1);
    await checkRecovered(g2, 1);
    expect((await matcherStatus(m1)).store_fault).toBeNull();
    const after = await a.post('/orders', bid(w, 3));
    expect(after.status).toBe(200);
    // Three orders stored (the refused ones never were), the same on both gateways.
    await waitFor('g2 to hold the last order', 5_000, async () => ((await orderIdsOf(g2, w.address)).length === 3 ? true : undefined));
    expect(await orderIdsOf(g1, w.address)).toEqual(await orderIdsOf(g2, w.address));
  }, 60_000);

  it('a store that landed but was reported failed (the seam\'s fsync): the batch is answered from the stream, the gateways refuse writes until the leader\'s retry finds it stored', async () => {
    const [g1, g2] = c.gateways;
    const m1 = c.matchers.get('m1')!;
    const a = api(g1.url);
    const fault_ms = Date.now();
    fs.writeFileSync(fault_file, 'fsync');
    // Stored on a quorum, so the gateways read it from the stream and answer it: nothing lost.
    const stored = await a.post('/orders', bid(w, 6));
    expect(stored.status).toBe(200);
    const h = await healthOf(g1, 503);
    expect(Date.parse(/since (\S+):/.exec(h.body.message as string)![1])).toBeGreaterThanOrEqual(fault_ms);
    const st = await adminState(g1);
    // The leader retries the batch the gateways already hold: it does not know it is stored.
    expect(st.journal).toMatchObject({ status: 'failing', failing_batch_id: Number(st.batch_id), faults: 2 });
    expect(st.journal.last_error).toContain('injected failure after the store');
    expect((await a.post('/orders', bid(w, 7))).status).toBe(503);
    await healthOf(g2, 503);
    const ids = await orderIdsOf(g1, w.address);
    fs.rmSync(fault_file);
    await checkRecovered(g1, 2);
    await checkRecovered(g2, 2);
    // The retry took the stored batch for its own (one batch, not two): the next order is the next batch.
    const ms = await matcherStatus(m1);
    expect(ms).toMatchObject({ store_fault: null, batch_id: Number(st.batch_id) });
    expect((await a.post('/orders', bid(w, 8))).status).toBe(200);
    // The gateway answers once it read the batch from the event stream, which can come before the
    // leader's own status counts it (the store's ack): wait for the batch, then check it is the only one.
    const next = Number(st.batch_id) + 1;
    await waitFor(`matcher m1 at batch ${next}`, 5_000, async () => ((await matcherStatus(m1)).batch_id >= next ? true : undefined));
    expect((await matcherStatus(m1)).batch_id).toBe(next);
    expect((await orderIdsOf(g1, w.address)).length).toBe(ids.length + 1);
  }, 60_000);

  it('a failing leader killed -9: the standby that takes over stores the held batch and the gateways turn healthy', async () => {
    const [g1, g2] = c.gateways;
    const m1 = c.matchers.get('m1')!;
    const m2 = c.matchers.get('m2')!;
    const a = api(g1.url);
    const before = await orderIdsOf(g1, w.address);
    const fault_ms = Date.now();
    fs.writeFileSync(fault_file, 'write');
    const pending = a.post('/orders', bid(w, 4));
    expect(await within(pending, 1500)).toBe('pending');
    await checkRefusing(g1, w, 3, fault_ms);
    await healthOf(g2, 503);

    m1.proc.kill('SIGKILL');
    const answered = await within(pending, 15_000);
    expect(answered).not.toBe('pending');
    expect((answered as ApiResponse).status).toBe(200);
    expect((await matcherStatus(m2)).role).toBe('leader');
    await checkRecovered(g1, 3);
    await checkRecovered(g2, 3);
    expect(await orderIdsOf(g1, w.address)).toEqual([...before, Number((answered as ApiResponse).body.data.order_id)].sort((x, y) => x - y));
    expect((await a.post('/orders', bid(w, 5))).status).toBe(200);
  }, 60_000);
});
