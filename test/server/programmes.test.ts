// Referrals and forced inclusion on the real server, over HTTP: every rule of docs/api.md
// ("Referrals", "Forced inclusion"), kill -9 survival, the state root, and the two clocks that
// matter (the 90-day referral window and the 24-hour inclusion deadline) moved with the injected
// sequencer clock (RINGBOOK_CLOCK_OFFSET_MS, read at start).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  REPO_ROOT, Wallet, adminHeaders, adminState, api, balances, caughtUpState, deposit, startServer, type StartedServer,
} from './harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const DAY_MS = 24 * 3600 * 1000;
const HOUR_MS = 3600 * 1000;

const dataDir = tempDirsPerFile('ringbook-programmes-');

async function start(data_dir: string, clock_offset_ms = 0, config: Record<string, unknown> = {}): Promise<StartedServer> {
  return startServer({ config, env: { RINGBOOK_DATA_DIR: data_dir, RINGBOOK_CLOCK_OFFSET_MS: String(clock_offset_ms) } });
}

async function poll<T>(what: string, f: () => Promise<T | null>, timeout_ms = 15_000): Promise<T> {
  const until = Date.now() + timeout_ms;
  for (;;) {
    const v = await f();
    if (v !== null) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `ringbook verify` over everything the server published (once the state-root thread caught up),
 * with the server's own config file: every batch re-executed, every root compared.
 */
async function verifyAll(s: StartedServer): Promise<{ code: number; output: string }> {
  await caughtUpState(s);
  const config = path.join(s.data_dir, 'test-config.json');
  const out = dataDir();
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(REPO_ROOT, 'dist', 'src', 'cli', 'verify.js'), '--url', s.url, '--config', config, '--out', out],
      { cwd: REPO_ROOT, timeout: 60_000 }, (e, stdout, stderr) => {
        resolve({ code: e === null ? 0 : typeof e.code === 'number' ? e.code : 1, output: stdout + stderr });
      });
  });
}

async function ok(p: Promise<{ status: number; body: any; text: string }>): Promise<any> {
  const r = await p;
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status} ${r.text}`);
  return r.body.data;
}

describe('referrals on the real server', () => {
  it('registers once, shares 20% of taker fees for 90 days, survives kill -9, is in the state root', async () => {
    const dir = dataDir();
    const referred = Wallet.random();
    const referrer = Wallet.random();
    const maker = Wallet.random();
    let s = await start(dir);
    let http = api(s.url);
    await deposit(s, referred.address, 'USDC', '100000');
    await deposit(s, referrer.address, 'USDC', '1');
    await deposit(s, maker.address, 'ETH', '10');
    await deposit(s, maker.address, 'USDC', '100000');

    // Refusals first: none consumes a nonce.
    let r = await http.post('/referral/register', referred.referral(referred.address, { nonce: 1 }));
    expect([r.status, r.body.error]).toEqual([400, 'INVALID_REFERRAL']);
    r = await http.post('/referral/register', referred.referral(referrer.address, { nonce: 1, signer: (m) => referrer.sign(m) }));
    expect([r.status, r.body.error]).toEqual([401, 'INVALID_SIGNATURE']);
    r = await http.post('/referral/register', { referred: referred.address, referrer: 'nope', nonce: 1, signature: '0x' });
    expect([r.status, r.body.error]).toEqual([400, 'INVALID_REQUEST']);

    const before = (await caughtUpState(s)).state_root as string;
    const sent_ms = Date.now();
    const reg = await ok(http.post('/referral/register', referred.referral(referrer.address.toUpperCase().replace('0X', '0x'), { nonce: 1 })));
    const answered_ms = Date.now();
    referred.skipTo(1);
    expect(reg.referred).toBe(referred.address);
    expect(reg.referrer).toBe(referrer.address);
    const until_ms = Date.parse(reg.active_until);
    // 90 days after the registering batch's time, which the matcher took between the request's
    // send and its answer (50 ms for the batch clock's source, as in dead_man.test.ts), rather
    // than within a minute of whenever this line runs.
    expect(until_ms).toBeGreaterThanOrEqual(sent_ms + 90 * DAY_MS - 50);
    expect(until_ms).toBeLessThanOrEqual(answered_ms + 90 * DAY_MS + 50);
    r = await http.post('/referral/register', referred.referral(maker.address));
    expect([r.status, r.body.error]).toEqual([400, 'REFERRAL_EXISTS']);
    // The state root commits to the referral: the batch that registered it (and nothing else) changed it.
    const after = (await caughtUpState(s)).state_root as string;
    expect(after).toMatch(/^0x[0-9a-f]{64}$/);
    expect(after).not.toBe(before);

    // Taker fee 5 bps of 2000 USDC = 1 USDC; maker rebate 1 bp (0.2 USDC): the referrer gets
    // 20% = 0.2 USDC, within the 0.8 USDC the fee account earned.
    await ok(http.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2000_000_000, quantity: 1_000_000 })));
    await ok(http.post('/orders', referred.order({ market_id: 'ETH-USDC', side: 'bid', price: 2000_000_000, quantity: 1_000_000 })));
    expect((await balances(s, referrer.address)).USDC.available).toBe(1_200_000);
    // The referred user as maker: its fees are never shared.
    await ok(http.post('/orders', referred.order({ market_id: 'ETH-USDC', side: 'ask', price: 2000_000_000, quantity: 1_000_000 })));
    await ok(http.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2000_000_000, quantity: 1_000_000 })));
    expect((await balances(s, referrer.address)).USDC.available).toBe(1_200_000);

    const stats = await ok(http.get(`/referral/${referrer.address}`));
    expect(stats).toMatchObject({
      address: referrer.address, referral_code: referrer.address, referred_users: 1, total_earnings_usdc: '200000',
      active_referrals: [{ address: referred.address, active_until: reg.active_until, earned_usdc: '200000' }],
      referred_by: null,
    });
    expect(stats.active_until).toBe(reg.active_until);
    expect(stats.active_referral_count).toBe(1);
    for (const bad of ['0', '1001', 'x']) expect((await http.get(`/referral/${referrer.address}?limit=${bad}`)).body.error).toBe('INVALID_REQUEST');
    expect((await ok(http.get(`/referral/${referred.address}`))).referred_by).toEqual({ referrer: referrer.address, active_until: reg.active_until });
    expect((await http.get('/referral/0x12')).status).toBe(400);

    // A second referred user: the lists hold the most recent `limit`, the counts cover all.
    const second = Wallet.random();
    await deposit(s, second.address, 'USDC', '1');
    await ok(http.post('/referral/register', second.referral(referrer.address)));
    const two = await ok(http.get(`/referral/${referrer.address}?limit=1`));
    expect(two).toMatchObject({ referred_users: 2, active_referral_count: 2, total_earnings_usdc: '200000' });
    expect(two.referrals.map((x: { address: string }) => x.address)).toEqual([second.address]);
    expect(two.active_referrals.map((x: { address: string }) => x.address)).toEqual([second.address]);
    const stats_two = await ok(http.get(`/referral/${referrer.address}`));
    expect(stats_two.referrals.map((x: { address: string }) => x.address)).toEqual([referred.address, second.address]);

    // A snapshot, then kill -9: the restart resumes from the snapshot (its read model included).
    const snap = await ok(http.post('/admin/snapshot', {}, adminHeaders(s)));
    await s.stop('SIGKILL');
    s = await start(dir);
    http = api(s.url);
    expect((await adminState(s)).recovery).toMatchObject({ snapshot_batch_id: Number(snap.batch_id) });
    expect(await ok(http.get(`/referral/${referrer.address}`))).toEqual(stats_two);
    expect((await balances(s, referrer.address)).USDC.available).toBe(1_200_000);
    r = await http.post('/referral/register', referred.referral(maker.address));
    expect(r.body.error).toBe('REFERRAL_EXISTS');

    // 91 days later (the sequencer clock moved): fee sharing has stopped, the relationship stays.
    await s.stop('SIGKILL');
    s = await start(dir, 91 * DAY_MS);
    http = api(s.url);
    await ok(http.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2000_000_000, quantity: 1_000_000 })));
    await ok(http.post('/orders', referred.order({ market_id: 'ETH-USDC', side: 'bid', price: 2000_000_000, quantity: 1_000_000 })));
    expect((await balances(s, referrer.address)).USDC.available).toBe(1_200_000);
    const late = await ok(http.get(`/referral/${referrer.address}`));
    expect(late.active_referrals).toEqual([]);
    expect(late.referrals[0]).toEqual({ address: referred.address, active_until: reg.active_until, active: false, earned_usdc: '200000' });
    expect(late.referrals.map((x: { active: boolean }) => x.active)).toEqual([false, false]);
    expect(late.active_referral_count).toBe(0);
    expect(late.active_until).toBeNull();
    r = await http.post('/referral/register', referred.referral(maker.address));
    expect(r.body.error).toBe('REFERRAL_EXISTS');
    // An outside verifier re-executes every published batch (referrals, shares, the restarts)
    // and agrees with every state root.
    const v = await verifyAll(s);
    expect(v.code, v.output).toBe(0);
    expect((await s.stop()).code).toBe(0);
  });
});

describe('forced inclusion on the real server', () => {
  it('includes entries in the next batch, in order, with their results; refuses bad payloads visibly', async () => {
    const dir = dataDir();
    const user = Wallet.random();
    const other = Wallet.random();
    const s = await start(dir);
    const http = api(s.url);
    await deposit(s, user.address, 'USDC', '10000');
    await deposit(s, other.address, 'USDC', '10');

    // Envelope n, payload n + 1 (the envelope's nonce is consumed first).
    const order = user.order({ market_id: 'ETH-USDC', side: 'bid', price: 1000_000_000, quantity: 1_000_000, client_order_id: 'forced-a' }, { nonce: 2 });
    const queued = await ok(http.post('/force-include', user.forceInclude(order, { nonce: 1 })));
    expect(queued).toMatchObject({ user: user.address, kind: 'order', nonce: 1, payload_nonce: 2, status: 'pending' });
    expect(Date.parse(queued.deadline) - Date.parse(queued.queued_at)).toBe(DAY_MS);
    // Bad payloads: queued, then refused at inclusion with their reason.
    const foreign = other.order({ market_id: 'ETH-USDC', side: 'bid', price: 1000_000_000, quantity: 1_000_000 }, { nonce: 4 });
    const mismatch = await ok(http.post('/force-include', user.forceInclude(foreign, { nonce: 3 })));
    const garbage = await ok(http.post('/force-include', user.forceInclude('{"not json', { nonce: 5 })));
    const forged = user.cancel({ client_order_id: 'forced-a' }, { nonce: 7, signer: (m) => other.sign(m) });
    const badsig = await ok(http.post('/force-include', user.forceInclude(forged, { nonce: 6 })));
    const cancel = user.cancel({ client_order_id: 'forced-a' }, { nonce: 9 });
    const last = await ok(http.post('/force-include', user.forceInclude(cancel, { nonce: 8 })));
    expect([mismatch.entry_id, garbage.entry_id, badsig.entry_id, last.entry_id]).toEqual([2, 3, 4, 5].map((k) => queued.entry_id + k - 1));
    // A bad envelope is refused at once.
    let r = await http.post('/force-include', user.forceInclude(order, { nonce: 10, signer: (m) => other.sign(m) }));
    expect([r.status, r.body.error]).toEqual([401, 'INVALID_SIGNATURE']);
    r = await http.post('/force-include', { ...user.forceInclude(order, { nonce: 10 }), payload: '0xzz' });
    expect([r.status, r.body.error]).toEqual([400, 'INVALID_REQUEST']);

    const done = await poll('entry 5 included', async () => {
      const e = await ok(http.get(`/force-include/${last.entry_id}`));
      return e.status === 'included' ? e : null;
    });
    expect(done.result).toEqual({ accepted: true, error: null, message: null, order_id: expect.any(Number) });
    const entries = await Promise.all([queued, mismatch, garbage, badsig].map((q) => ok(http.get(`/force-include/${q.entry_id}`))));
    expect(entries.map((e) => e.result)).toEqual([
      { accepted: true, error: null, message: null, order_id: expect.any(Number) },
      { accepted: false, error: 'INVALID_SIGNATURE', message: 'the forced payload is signed by another address than the user', order_id: null },
      { accepted: false, error: 'INVALID_REQUEST', message: 'the forced payload is not a well-formed signed request body', order_id: null },
      { accepted: false, error: 'INVALID_SIGNATURE', message: 'the forced payload signature is invalid', order_id: null },
    ]);
    // In order: each included no earlier than the one before; all well before their deadline.
    const all = [...entries, done];
    for (let i = 1; i < all.length; i++) expect(all[i].included_batch_id).toBeGreaterThanOrEqual(all[i - 1].included_batch_id);
    for (const e of all) expect(Date.parse(e.included_at)).toBeLessThan(Date.parse(e.deadline));
    // The results are visible like any other request's: the order was placed, then cancelled.
    const placed = await ok(http.get(`/account/${user.address}/orders/by-client-id/forced-a`)).catch(() => null);
    if (placed !== null) expect(placed.status).toBe('cancelled');
    expect((await balances(s, user.address)).USDC).toEqual({ available: 10_000_000_000, locked: 0 });
    expect((await adminState(s)).pending_forced_inclusions).toEqual([]);
    expect(entries.map((e) => e.kind)).toEqual(['order', 'order', 'unknown', 'cancel']);
    expect((await http.get('/force-include/999999')).status).toBe(404);
    expect((await http.get('/force-include/abc')).body.error).toBe('INVALID_REQUEST');
    expect((await http.get('/force-include/99999999999999999')).body.error).toBe('INVALID_REQUEST');
    expect((await http.get('/force-include/0')).body.error).toBe('INVALID_REQUEST');
    // A body that is not JSON, and one over the body limit, never reach the parser.
    expect((await http.post('/force-include', '{"user":')).body.error).toBe('INVALID_REQUEST');
    r = await http.post('/force-include', { ...user.forceInclude(order, { nonce: 20 }), payload: '0x' + '7b'.repeat(5000) });
    expect([r.status, r.body.error]).toEqual([400, 'INVALID_REQUEST']);
    expect((await s.stop()).code).toBe(0);
  });

  it('an entry the sequencer withholds is forced in before its deadline, across a kill -9', async () => {
    const dir = dataDir();
    const user = Wallet.random();
    // The sequencer holds entries as long as the engine lets it: 23 hours.
    const config = { force_inclusion: { hold_ms: 23 * HOUR_MS } };
    let s = await start(dir, 0, config);
    let http = api(s.url);
    await deposit(s, user.address, 'USDC', '10000');
    const order = user.order({ market_id: 'ETH-USDC', side: 'bid', price: 1000_000_000, quantity: 1_000_000 }, { nonce: 2 });
    const queued = await ok(http.post('/force-include', user.forceInclude(order, { nonce: 1 })));
    // Other traffic makes batches; the entry stays pending, listed with its deadline.
    await deposit(s, user.address, 'USDC', '1');
    await new Promise((res) => setTimeout(res, 300));
    await deposit(s, user.address, 'USDC', '1');
    expect((await ok(http.get(`/force-include/${queued.entry_id}`))).status).toBe('pending');
    const pending = (await adminState(s)).pending_forced_inclusions;
    expect(pending).toEqual([{
      entry_id: queued.entry_id, user: user.address, kind: 'order', payload_nonce: 2,
      queued_at: queued.queued_at, deadline: queued.deadline,
    }]);
    expect((await balances(s, user.address)).USDC.locked).toBe(0);

    // A snapshot holds the pending entry; kill -9, then the clock reaches queued + 23 h: with no
    // traffic at all, the matcher starts a batch for the entry, included an hour before its deadline.
    await ok(http.post('/admin/snapshot', {}, adminHeaders(s)));
    await s.stop('SIGKILL');
    s = await start(dir, 23 * HOUR_MS + 60_000, config);
    http = api(s.url);
    expect((await adminState(s)).recovery.snapshot_batch_id).toBeGreaterThan(0);
    const done = await poll('the withheld entry included', async () => {
      const e = await ok(http.get(`/force-include/${queued.entry_id}`));
      return e.status === 'included' ? e : null;
    });
    expect(done.result.accepted).toBe(true);
    expect(Date.parse(done.included_at)).toBeLessThan(Date.parse(queued.deadline));
    expect(Date.parse(done.included_at)).toBeGreaterThanOrEqual(Date.parse(queued.queued_at) + 23 * HOUR_MS);
    expect((await balances(s, user.address)).USDC.locked).toBeGreaterThan(0);
    expect((await adminState(s)).pending_forced_inclusions).toEqual([]);
    // The verifier (same config, so the same hold) agrees, the empty batch that forced the entry in included.
    const v = await verifyAll(s);
    expect(v.code, v.output).toBe(0);
    expect((await s.stop()).code).toBe(0);
  });
});
