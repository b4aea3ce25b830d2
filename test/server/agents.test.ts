// Agent keys on the real server (DECISIONS "Agent keys"; docs/api.md): a user approves a hot key
// that may sign its orders, cancels, amends, cancel-all, cancel-after and batch items, never its
// withdrawals, referrals, agent changes or forced inclusions (401 INVALID_SIGNATURE); revocation
// and expiry end it; each signer has its own nonce mark; at most 10 live agents; `ringbook verify`
// re-executes every batch (agent signatures recovered to the signer the record names, the
// approvals judged by the re-executed engine) and agrees on every root.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fail, fundedWallet, ok } from './checks.js';
import {
  adminHeaders, api, caughtUpState, deposit, runVerifier, settledAdminState, startServer, type Api, type StartedServer, Wallet,
} from './harness.js';
import { serverPerFile } from './per_file.js';

let s: StartedServer;
let a: Api;
serverPerFile((server, client) => {
  s = server;
  a = client;
});

const HOUR_MS = 3_600_000;
const ETH_BID = { market_id: 'ETH-USDC', side: 'bid', price: 1_900_000_000, quantity: 100_000 } as const;

const funded = (): Promise<Wallet> => fundedWallet(s, { USDC: '100000', ETH: '10' });

async function openOrders(w: Wallet, client: Api = a): Promise<{ order_id: string }[]> {
  return ok(await client.get(`/account/${w.address}/orders?status=open&limit=100`));
}

describe('agent keys', () => {
  it('an agent trades for its user and is listed; it can never withdraw, refer, approve, revoke or force-include', async () => {
    const mm = await funded();
    const agent = Wallet.random();
    const until = Date.now() + HOUR_MS;
    const approved = ok(await a.post('/agents', mm.approveAgent(agent.address, 'quoter-1', until)));
    expect(approved).toMatchObject({ user: mm.address, agent: agent.address, name: 'quoter-1', valid_until_ms: until });
    const listed = ok(await a.get(`/account/${mm.address}/agents`));
    expect(listed.agents).toEqual([expect.objectContaining({ agent: agent.address, name: 'quoter-1', valid_until_ms: until, nonce_high_water: 0 })]);

    // Orders, amends, cancels, cancel-all, cancel-after and batch items signed by the agent, for mm.
    const as = { user: mm.address };
    const bid = ok(await a.post('/orders', agent.order(ETH_BID, as)));
    expect(bid.status).toBe('open');
    ok(await a.post('/orders/amend', agent.amend({ order_id: Number(bid.order_id), price: 1_800_000_000, quantity: 100_000 }, as)));
    ok(await a.post('/orders/cancel', agent.cancel({ order_id: bid.order_id }, as)));
    const batch = ok(await a.post('/orders/batch', { requests: [
      { kind: 'order', ...agent.order(ETH_BID, as) },
      { kind: 'order', ...agent.order({ ...ETH_BID, side: 'ask', price: 2_100_000_000 }, as) },
    ] }));
    expect(batch.map((x: { ok: boolean }) => x.ok)).toEqual([true, true]);
    expect((await openOrders(mm)).length).toBe(2);
    expect(ok(await a.post('/orders/cancel-after', agent.cancelAfter(3_600_000, as))).deadline).toMatch(/^\d{4}-/);
    ok(await a.post('/orders/cancel-after', agent.cancelAfter(0, as)));
    ok(await a.post('/orders/cancel-all', agent.cancelAll(undefined, as)));
    expect((await openOrders(mm)).length).toBe(0);
    // Its orders are the user's: the agent itself holds nothing.
    expect((await openOrders(agent)).length).toBe(0);

    // Never the user's money, referrals, keys or forced inclusions.
    fail(await a.post('/withdrawals', agent.withdraw('USDC', '1000000', as)), 401, 'INVALID_SIGNATURE');
    fail(await a.post('/referral/register', agent.referral(Wallet.random().address, as)), 401, 'INVALID_SIGNATURE');
    fail(await a.post('/agents', agent.approveAgent(Wallet.random().address, 'sneaky', until, as)), 401, 'INVALID_SIGNATURE');
    fail(await a.post('/agents/revoke', agent.revokeAgent(agent.address, as)), 401, 'INVALID_SIGNATURE');
    const payload = mm.order(ETH_BID, { nonce: 1_000 });
    fail(await a.post('/force-include', agent.forceInclude(payload, as)), 401, 'INVALID_SIGNATURE');
    // Nor for another user.
    const other = await funded();
    fail(await a.post('/orders', agent.order(ETH_BID, { user: other.address })), 401, 'INVALID_SIGNATURE');
    // Bad approvals: the engine's and the front's checks.
    fail(await a.post('/agents', mm.approveAgent(agent.address, 'has:colon', until)), 400, 'INVALID_REQUEST', /name/);
    fail(await a.post('/agents', mm.approveAgent(agent.address, 'late', Date.now() - 1)), 400, 'INVALID_REQUEST', /valid_until_ms/);
    fail(await a.post('/agents', mm.approveAgent(mm.address, 'me', until)), 400, 'INVALID_REQUEST', /own address/);
    fail(await a.post('/agents', mm.approveAgent(agent.address, 'forged', until, { signer: (m) => agent.sign(m) })), 401, 'INVALID_SIGNATURE');
    fail(await a.post('/agents/revoke', mm.revokeAgent(Wallet.random().address)), 404, 'NOT_FOUND');
  }, 60_000);

  it('hostile agent bodies: wrong types, missing or unknown fields, too long, too far ahead are 400 and change nothing', async () => {
    const mm = await funded();
    const agent = Wallet.random();
    const until = Date.now() + HOUR_MS;
    const good = mm.approveAgent(agent.address, 'ok', until) as Record<string, unknown>;
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ ...good, name: 7 }, /name/],
      [{ ...good, name: 'x'.repeat(17) }, /name/],
      [{ ...good, agent: 'not-an-address' }, /agent/],
      [{ ...good, valid_until_ms: '1e30' }, /valid_until_ms/],
      // Signed as it stands (a changed signed field would be 401 first): beyond the 180-day limit.
      [mm.approveAgent(agent.address, 'far', Date.now() + 181 * 24 * HOUR_MS) as Record<string, unknown>, /valid_until_ms/],
      [{ ...good, extra: 1 }, /extra/],
      [Object.fromEntries(Object.entries(good).filter(([k]) => k !== 'agent')), /agent/],
    ];
    for (const [body, why] of bad) fail(await a.post('/agents', body), 400, 'INVALID_REQUEST', why);
    const revoke = mm.revokeAgent(agent.address) as Record<string, unknown>;
    fail(await a.post('/agents/revoke', { ...revoke, agent: 42 }), 400, 'INVALID_REQUEST', /agent/);
    fail(await a.post('/agents/revoke', Object.fromEntries(Object.entries(revoke).filter(([k]) => k !== 'nonce'))), 400, 'INVALID_REQUEST', /nonce/);
    const listed = ok(await a.get(`/account/${mm.address}/agents`)) as { agents: unknown[] };
    expect(listed.agents).toEqual([]);
    fail(await a.get('/account/0xnothex/agents'), 400, 'INVALID_REQUEST');
  }, 30_000);

  it('a wallet and two agents sign concurrently with the same nonce values: no DUPLICATE_NONCE between them', async () => {
    const mm = await funded();
    const agents = [Wallet.random(), Wallet.random()];
    for (const [i, ag] of agents.entries()) ok(await a.post('/agents', mm.approveAgent(ag.address, `mm-${i}`, Date.now() + HOUR_MS)));
    const ROUNDS = 12;
    const signers = [mm, ...agents];
    const results = await Promise.all(signers.map(async (w) => {
      const out: number[] = [];
      for (let k = 0; k < ROUNDS; k++) {
        // Every signer uses the nonces 500, 501, ...: one shared mark would refuse most of them.
        const r = await a.post('/orders', w.order({ ...ETH_BID, price: 1_000_000_000 + k * 10_000_000 }, { user: mm.address, nonce: 500 + k }));
        out.push(r.status);
      }
      return out;
    }));
    for (const statuses of results) expect(statuses).toEqual(new Array(ROUNDS).fill(200));
    expect((await openOrders(mm)).length).toBe(3 * ROUNDS);
    // Each mark is its own: a reused agent nonce is refused, the wallet's own mark untouched by agents.
    fail(await a.post('/orders', agents[0].order(ETH_BID, { user: mm.address, nonce: 500 + ROUNDS - 1 })), 400, 'DUPLICATE_NONCE');
    const listed = ok(await a.get(`/account/${mm.address}/agents`));
    expect(listed.agents.map((x: { nonce_high_water: number }) => x.nonce_high_water)).toEqual([500 + ROUNDS - 1, 500 + ROUNDS - 1]);
    ok(await a.post('/orders/cancel-all', mm.cancelAll(undefined, { nonce: 10_000 })));
  }, 60_000);

  it('refuses an agent after revocation and after expiry; the orders it placed stay', async () => {
    const mm = await funded();
    const revoked = Wallet.random();
    ok(await a.post('/agents', mm.approveAgent(revoked.address, 'r', Date.now() + HOUR_MS)));
    // An agent valid for a short window places one order in it. A window the machine's load used
    // up before the approval's or the order's answer (the test's clock already past the expiry) is
    // no verdict: a new agent gets one twice as long (bounded). A refusal inside the window fails.
    let expiring = Wallet.random();
    let expires_at_ms = 0;
    for (let window_ms = 1_500; ; window_ms *= 2) {
      expiring = Wallet.random();
      expires_at_ms = Date.now() + window_ms;
      const approved = await a.post('/agents', mm.approveAgent(expiring.address, 'e', expires_at_ms));
      const placed = approved.status === 200 ? await a.post('/orders', expiring.order(ETH_BID, { user: mm.address })) : approved;
      if (placed.status === 200 || Date.now() < expires_at_ms || window_ms >= 12_000) {
        ok(placed);
        break;
      }
    }
    ok(await a.post('/orders', revoked.order(ETH_BID, { user: mm.address })));
    ok(await a.post('/agents/revoke', mm.revokeAgent(revoked.address)));
    fail(await a.post('/orders', revoked.order(ETH_BID, { user: mm.address })), 401, 'INVALID_SIGNATURE');
    fail(await a.post('/orders/cancel-all', revoked.cancelAll(undefined, { user: mm.address })), 401, 'INVALID_SIGNATURE');
    // The expiry is a clock event: wait for it on the clock (the front and the batch read the same
    // system clock, later) rather than a fixed 1.7 s, which paired with a fixed 1.5 s window that
    // a loaded machine could use up before the agent's order (refused: a flake, not a bug).
    await new Promise((r) => setTimeout(r, Math.max(0, expires_at_ms + 1 - Date.now())));
    while (Date.now() <= expires_at_ms) await new Promise((r) => setTimeout(r, 1)); // a timer may fire early by a ms
    fail(await a.post('/orders', expiring.order(ETH_BID, { user: mm.address })), 401, 'INVALID_SIGNATURE');
    // A new batch (the deposit) passed the expiry: the listing no longer shows it.
    ok(await deposit(s, mm.address, 'USDC', '1'));
    expect(ok(await a.get(`/account/${mm.address}/agents`)).agents).toEqual([]);
    expect((await openOrders(mm)).length).toBe(2);
    // Approved again, the revoked key starts above its old nonces (its old signatures cannot replay).
    ok(await a.post('/agents', mm.approveAgent(revoked.address, 'r2', Date.now() + HOUR_MS)));
    fail(await a.post('/orders', revoked.order(ETH_BID, { user: mm.address, nonce: 1 })), 400, 'DUPLICATE_NONCE');
    ok(await a.post('/orders', revoked.order(ETH_BID, { user: mm.address })));
  }, 60_000);

  it('refuses the 11th live agent; then `ringbook verify` agrees on every root', async () => {
    const mm = await funded();
    const until = Date.now() + HOUR_MS;
    for (let i = 0; i < 10; i++) ok(await a.post('/agents', mm.approveAgent(Wallet.random().address, `k${i}`, until)));
    fail(await a.post('/agents', mm.approveAgent(Wallet.random().address, 'k10', until)), 400, 'INVALID_REQUEST', /10 live agents/);
    expect(ok(await a.get(`/account/${mm.address}/agents`)).agents).toHaveLength(10);

    const st = await settledAdminState(s);
    const v = await runVerifier(s.url, path.join(s.data_dir, 'test-config.json'));
    expect(v.code, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout.trim().split('\n').pop()!)).toMatchObject({ verify: 'ok' });
    expect(st.state_root).toMatch(/^0x[0-9a-f]{64}$/);
  }, 60_000);
});

describe('agent keys across a snapshot and kill -9', () => {
  it('the agents, their marks and the floor come back from the snapshot and the journal after it; same root; verify agrees', async () => {
    const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-agents-'));
    const env = { RINGBOOK_DATA_DIR: data_dir };
    const config = { snapshots: { every_batches: 0, keep: 2 } };
    let srv = await startServer({ env, config });
    try {
      const c = api(srv.url);
      const mm = Wallet.random();
      ok(await deposit(srv, mm.address, 'USDC', '100000'));
      const kept = Wallet.random();
      const gone = Wallet.random();
      ok(await c.post('/agents', mm.approveAgent(kept.address, 'kept', Date.now() + HOUR_MS)));
      ok(await c.post('/agents', mm.approveAgent(gone.address, 'gone', Date.now() + HOUR_MS)));
      ok(await c.post('/orders', gone.order(ETH_BID, { user: mm.address, nonce: 40 })));
      ok(await c.post('/agents/revoke', mm.revokeAgent(gone.address)));
      ok(await c.post('/orders', kept.order(ETH_BID, { user: mm.address, nonce: 7 })));
      // Snapshot here; then more agent flow goes only to the journal.
      ok(await c.post('/admin/snapshot', {}, adminHeaders(srv)));
      ok(await c.post('/orders', kept.order(ETH_BID, { user: mm.address, nonce: 8 })));
      const before = await caughtUpState(srv);
      const listed = ok(await c.get(`/account/${mm.address}/agents`));
      expect(listed).toMatchObject({ nonce_floor: 40, agents: [{ agent: kept.address, name: 'kept', nonce_high_water: 8 }] });
      await srv.stop('SIGKILL');

      srv = await startServer({ env, config });
      const after = await caughtUpState(srv);
      expect(after.state_root).toBe(before.state_root);
      expect(after.recovery).toMatchObject({ snapshot_batch_id: expect.any(Number) });
      const d = api(srv.url);
      expect(ok(await d.get(`/account/${mm.address}/agents`))).toEqual(listed);
      // The marks survived: the kept agent's 8 is spent, the revoked agent approved again starts above 40.
      fail(await d.post('/orders', kept.order(ETH_BID, { user: mm.address, nonce: 8 })), 400, 'DUPLICATE_NONCE');
      ok(await d.post('/orders', kept.order(ETH_BID, { user: mm.address, nonce: 9 })));
      fail(await d.post('/orders', gone.order(ETH_BID, { user: mm.address, nonce: 41 })), 401, 'INVALID_SIGNATURE');
      ok(await d.post('/agents', mm.approveAgent(gone.address, 'back', Date.now() + HOUR_MS)));
      fail(await d.post('/orders', gone.order(ETH_BID, { user: mm.address, nonce: 40 })), 400, 'DUPLICATE_NONCE');
      ok(await d.post('/orders', gone.order(ETH_BID, { user: mm.address, nonce: 41 })));
      expect((await openOrders(mm, d)).length).toBe(5);

      await caughtUpState(srv);
      const v = await runVerifier(srv.url, path.join(srv.data_dir, 'test-config.json'));
      expect(v.code, v.stderr).toBe(0);
      expect(JSON.parse(v.stdout.trim().split('\n').pop()!)).toMatchObject({ verify: 'ok' });
      expect((await srv.stop()).code).toBe(0);
    } finally {
      await srv.stop();
      fs.rmSync(data_dir, { recursive: true, force: true });
    }
  }, 90_000);
});
