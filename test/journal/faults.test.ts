// Journal faults (issue 20) on the real server: write and fsync failures injected at the journal
// boundary (the real LMDB environment; the seam in src/journal/journal.ts fails chosen writes),
// and a real full disk (a 16 MiB tmpfs mounted by the test on the journal directory: the tests
// run as root). In each case the server refuses new writes with 503 and a log line, serves reads,
// does not acknowledge the batch that is not durable, and resumes by itself once writes succeed;
// after a kill -9 everything acknowledged is there, once. While writes fail GET /health answers
// 503 OVERLOADED on both listeners (a load balancer takes the server out), GET /admin/state
// `journal` says since when and why, and ringbook_journal_failing is 1; all of it turns back once
// a retry lands.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WAL_BYTES_DEFAULT, WAL_PAGE_BYTES } from '../../src/journal/wal.js';
import { WAL_STORE_FILL_DENOMINATOR } from '../../src/journal/wal_store.js';
import { adminHeaders, adminState, api, startServer, Wallet, type ApiResponse, type StartedServer } from '../server/harness.js';
import { healthListener } from '../server/health_port.js';
import { metricValue } from '../server/metrics_scrape.js';
import { sleep } from '../ws/client.js';
import { tempDirsPerFile } from '../temp_dirs.js';

// The dirs go after the mounts in them are unmounted (the afterAll below runs first: last registered first).
const faultDir = tempDirsPerFile('ringbook-fault-');
const fullDir = tempDirsPerFile('ringbook-full-');
const mounts: string[] = [];
afterAll(() => {
  for (const m of mounts) execFileSync('umount', [m]);
});

/** Resolves with the answer, or with 'pending' if none came within `ms`. */
async function within(p: Promise<ApiResponse>, ms: number): Promise<ApiResponse | 'pending'> {
  return Promise.race([p, sleep(ms).then(() => 'pending' as const)]);
}

async function orderIds(s: StartedServer, w: Wallet): Promise<number[]> {
  const r = await api(s.url).get(`/account/${w.address}/orders?status=all&limit=1000`);
  expect(r.status).toBe(200);
  return (r.body.data as { order_id: number }[]).map((o) => o.order_id);
}

const bid = (w: Wallet, price_ticks: number): Record<string, unknown> => w.order({ market_id: 'ETH-USDC', side: 'bid', price: price_ticks * 10_000, quantity: 100 });

/**
 * The common check while a write fails: the order sent is not answered (null: none is pending,
 * see the full disk), new writes are 503, reads are served and the log says why.
 */
async function checkRefusing(s: StartedServer, w: Wallet, pending: Promise<ApiResponse> | null, started_ms: number): Promise<void> {
  const a = api(s.url);
  if (pending !== null) expect(await within(pending, 1500)).toBe('pending');
  for (let i = 0; i < 50 && !/journal write of batch \d+ failed/.test(s.output().stderr); i++) await sleep(20);
  expect(s.output().stderr).toMatch(/journal write of batch \d+ failed .*refusing new writes with 503/);
  const balances = await a.get(`/account/${w.address}/balances`);
  expect(balances.status).toBe(200);
  const orders = await orderIds(s, w);
  const batch_id = (await adminState(s)).batch_id;
  const refused = await a.post('/orders', bid(w, 3));
  expect(refused.status).toBe(503);
  expect(refused.body).toMatchObject({ ok: false, error: 'OVERLOADED', message: expect.stringContaining('journal cannot write') });
  const dep = await a.post('/deposit', { user: w.address, asset: 'USDC', amount: '1' }, adminHeaders(s));
  expect(dep.status).toBe(503);
  if (orders.length > 0) {
    const cancel = await a.post('/orders/cancel', w.cancel({ order_id: String(orders[0]) }));
    expect(cancel.status).toBe(503);
    expect(cancel.body).toMatchObject({ ok: false, error: 'OVERLOADED' });
  }
  // Health: 503 on both listeners with a public reason; LMDB's error only in /admin/state.
  const h = await a.get('/health');
  expect(h.status).toBe(503);
  expect(h.body).toMatchObject({ ok: false, error: 'OVERLOADED' });
  expect(h.body.message).toMatch(/^unhealthy: the journal cannot write since \d{4}-\d\d-\d\dT[\d:.]+Z: writes are refused .*GET \/admin\/state journal$/);
  const since_ms = Date.parse(/since (\S+):/.exec(h.body.message as string)![1]);
  expect(since_ms).toBeGreaterThanOrEqual(started_ms);
  expect(since_ms).toBeLessThanOrEqual(Date.now());
  const hl = await healthListener(s);
  expect(hl.status).toBe(503);
  expect(hl.body).toMatchObject({ ok: false, error: 'OVERLOADED', message: h.body.message });
  const st = await adminState(s);
  expect(st.journal).toMatchObject({ status: 'failing', failing_since_ms: since_ms, last_error_at_ms: since_ms, recovered_at_ms: null, faults: 1 });
  expect(st.journal.failing_batch_id).toBe(Number(st.batch_id) + 1);
  expect(st.journal.last_error).toEqual(expect.any(String));
  expect(h.body.message).not.toContain(st.journal.last_error);
  expect(await metricValue(s, 'ringbook_journal_failing')).toBe(1);
  expect(await metricValue(s, 'ringbook_journal_failing_seconds')).toBeGreaterThan(0);
  expect(await metricValue(s, 'ringbook_journal_faults_total')).toBe(1);
  // Nothing of the refused writes was applied; reads are served.
  expect((await a.get(`/account/${w.address}/balances`)).body.data).toEqual(balances.body.data);
  expect(await orderIds(s, w)).toEqual(orders);
  expect((await adminState(s)).batch_id).toBe(batch_id);
  expect((await a.get('/markets')).status).toBe(200);
}

/** Once the retry landed: /health 200 on both listeners, the journal ok with the fault it had, the metric 0. */
async function checkRecovered(s: StartedServer): Promise<void> {
  let h = await api(s.url).get('/health');
  for (let i = 0; i < 50 && h.status !== 200; i++) {
    await sleep(20);
    h = await api(s.url).get('/health');
  }
  expect(h.status).toBe(200);
  expect(h.body.data.status).toBe('ok');
  expect((await healthListener(s)).status).toBe(200);
  const j = (await adminState(s)).journal;
  expect(j).toMatchObject({ status: 'ok', failing_since_ms: null, failing_batch_id: null, faults: 1 });
  expect(j.last_error).toEqual(expect.any(String));
  expect(j.recovered_at_ms).toBeGreaterThanOrEqual(j.last_error_at_ms);
  expect(await metricValue(s, 'ringbook_journal_failing')).toBe(0);
  expect(await metricValue(s, 'ringbook_journal_failing_seconds')).toBe(0);
  expect(await metricValue(s, 'ringbook_journal_faults_total')).toBe(1);
}

describe('injected journal faults (test seam over the real LMDB environment)', () => {
  for (const kind of ['write', 'fsync'] as const) {
    it(`${kind} failures: 503 for new writes, reads served, the pending order answered only once durable, nothing lost after kill -9`, async () => {
      const data_dir = faultDir();
      const fault_file = path.join(data_dir, 'fault');
      const env = { RINGBOOK_DATA_DIR: data_dir, RINGBOOK_TEST_JOURNAL_FAULT_FILE: fault_file };
      let s = await startServer({ env, config: { server: { health_port: 0 } } });
      const w = Wallet.random();
      const a = api(s.url);
      expect((await a.post('/deposit', { user: w.address, asset: 'USDC', amount: '100000' }, adminHeaders(s))).status).toBe(200);
      const before = await a.post('/orders', bid(w, 1));
      expect(before.status).toBe(200);
      expect((await a.get('/health')).status).toBe(200);
      expect((await adminState(s)).journal).toEqual({
        status: 'ok', failing_since_ms: null, failing_batch_id: null, last_error: null, last_error_batch_id: null,
        last_error_at_ms: null, recovered_at_ms: null, faults: 0,
      });
      expect(await metricValue(s, 'ringbook_journal_failing')).toBe(0);
      const fault_ms = Date.now();

      fs.writeFileSync(fault_file, kind);
      const pending = a.post('/orders', bid(w, 2));
      await checkRefusing(s, w, pending, fault_ms);

      fs.rmSync(fault_file);
      const answered = await within(pending, 10_000);
      expect(answered).not.toBe('pending');
      expect((answered as ApiResponse).status).toBe(200);
      for (let i = 0; i < 50 && !/journal writes succeed again/.test(s.output().stderr); i++) await sleep(20);
      expect(s.output().stderr).toMatch(/journal writes succeed again after \d+ ms: accepting writes/);
      await checkRecovered(s);
      const after = await a.post('/orders', bid(w, 4));
      expect(after.status).toBe(200);

      const acked = [before, answered as ApiResponse, after].map((r) => r.body.data.order_id as number);
      await s.stop('SIGKILL');
      s = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
      try {
        const ids = await orderIds(s, w);
        expect(new Set(ids).size).toBe(ids.length);
        for (const id of acked) expect(ids).toContain(id);
        expect(ids.length).toBe(3); // the refused one never reached the engine
      } finally {
        await s.stop('SIGKILL');
      }
    }, 60_000);
  }
});

describe('a full disk (tmpfs on the journal directory)', () => {
  it('refuses writes with 503 while the disk is full, serves reads, and resumes by itself when space returns', async () => {
    const data_dir = fullDir();
    const journal_dir = path.join(data_dir, 'journal');
    fs.mkdirSync(journal_dir);
    // Root only (the suite runs as root, like CI on this machine): a real ENOSPC, not a mock.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', journal_dir]);
    mounts.push(journal_dir);
    const s = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir }, config: { server: { health_port: 0 } } });
    try {
      const a = api(s.url);
      const w = Wallet.random();
      expect((await a.post('/deposit', { user: w.address, asset: 'USDC', amount: '100000' }, adminHeaders(s))).status).toBe(200);
      // Fill what is left of the tmpfs.
      const filler = path.join(journal_dir, 'filler');
      const fd = fs.openSync(filler, 'w');
      const chunk = Buffer.alloc(64 * 1024);
      try {
        for (let i = 0; i < 1000; i++) fs.writeSync(fd, chunk);
      } catch (e) {
        expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
      } finally {
        fs.closeSync(fd);
      }
      // Orders until one is not answered or refused (LMDB may still have a few free pages). The
      // journal's write-ahead file is preallocated (src/journal/wal.ts): the order that meets the
      // full disk is durable there and answered, the store of its batch into LMDB fails after
      // that and holds the matcher, and the next order is refused with 503 (or, sent before the
      // front heard of the fault, stays pending). A full disk before the write-ahead file was
      // created leaves it out: then LMDB's write is the acknowledgement's, and the order pends.
      // The store comes once the write-ahead batches fill half the file (wal_store.ts; one-page
      // batches here) or on a quiet exchange (no batch for WAL_STORE_QUIET_MS, which back-to-back
      // orders never leave): so up to that many orders, plus margin, one price (the locks stay small).
      const orders_max = WAL_BYTES_DEFAULT / WAL_PAGE_BYTES / WAL_STORE_FILL_DENOMINATOR + 200;
      const fault_ms = Date.now();
      let pending: Promise<ApiResponse> | null = null;
      let refused = false;
      const acked: number[] = [];
      for (let i = 0; i < orders_max && pending === null && !refused; i++) {
        const p = a.post('/orders', bid(w, 10));
        const r = await within(p, 1500);
        if (r === 'pending') pending = p;
        else if (r.status === 503) refused = true;
        else {
          expect(r.status).toBe(200);
          acked.push(r.body.data.order_id as number);
        }
      }
      expect(pending !== null || refused).toBe(true);
      await checkRefusing(s, w, pending, fault_ms);
      expect(s.output().stderr).toMatch(/journal write of batch \d+ failed \(.*(code 5|code 28|Input\/output|No space)/);
      expect((await adminState(s)).journal.last_error).toMatch(/code 5|code 28|Input\/output|No space/);

      fs.rmSync(filler);
      if (pending !== null) {
        const answered = await within(pending, 10_000);
        expect(answered).not.toBe('pending');
        expect((answered as ApiResponse).status).toBe(200);
        acked.push((answered as ApiResponse).body.data.order_id as number);
      } else {
        // The held store lands at its next retry (at most a second apart).
        for (let i = 0; i < 100 && (await adminState(s)).journal.status !== 'ok'; i++) await sleep(100);
      }
      await checkRecovered(s);
      const after = await a.post('/orders', bid(w, 500));
      expect(after.status).toBe(200);
      const ids = await orderIds(s, w);
      for (const id of [...acked, after.body.data.order_id]) expect(ids).toContain(id);
    } finally {
      await s.stop('SIGKILL');
    }
  }, 90_000);
});
