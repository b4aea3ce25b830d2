// The trader commands of the ringbook CLI (deposit, order, cancel, balances, book, bench) and the
// example market maker, as child processes against a real server.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bytesToHex, deposit, hexToBytes, REPO_ROOT, startServer, Wallet, type StartedServer } from '../server/harness.js';

const run = promisify(execFile);
const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'ringbook.js');
/**
 * Every test here runs CLI processes one after another, each a fresh Node start: ~0.3 s apiece on
 * an idle machine, 3-4 s measured on the 2-core machine loaded with other suites (load average
 * 15-23), where the 13 processes of the --stp test took 54 s and the market maker's test ran past
 * its old 20 s. The time is the processes' start-up, so the tests get room for it; a process
 * that hangs is still killed after CLI_PROCESS_MS.
 */
const CLI_TEST_MS = 150_000;
/** One CLI process: start-up (up to ~4 s loaded) plus the longest wait one asks for (force-include --timeout 15). */
const CLI_PROCESS_MS = 40_000;
/** How long the market maker's agent key stays approved: past any test's end. */
const AGENT_VALID_MS = 3_600_000;

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: CLI_PROCESS_MS });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

function ok(r: { code: number; stdout: string; stderr: string }): { code: number; stdout: string; stderr: string } {
  expect(r.code, r.stderr).toBe(0);
  return r;
}

async function keygen(): Promise<{ private_key: string; address: string }> {
  const r = ok(await cli(['keygen', '--json']));
  const k = JSON.parse(r.stdout) as { private_key: string; address: string };
  // The address is the key's (not only some well-formed pair of strings).
  expect(new Wallet(hexToBytes(k.private_key.replace(/^0x/, ''))).address.toLowerCase()).toBe(k.address.toLowerCase());
  return k;
}

/**
 * A key for a test's own accounts, made in-process: `ringbook keygen` is checked on the two keys of
 * beforeAll, and another Node start per wallet (0.3 s idle, seconds on a loaded machine) tested
 * nothing more. `wallet` signs the HTTP set-up (agent approval) of the same key.
 */
function freshKey(): { private_key: string; address: string; wallet: Wallet } {
  const wallet = Wallet.random();
  return { private_key: '0x' + bytesToHex(wallet.priv), address: wallet.address, wallet };
}

/**
 * Funds `user` over HTTP for a test whose subject is not the deposit command (that one is checked
 * in 'deposit, two crossing orders', with the admin token from the flag and from the environment).
 */
async function fund(s: StartedServer, user: string, amounts: ReadonlyArray<readonly [string, string]>): Promise<void> {
  for (const [asset, amount] of amounts) {
    const d = await deposit(s, user, asset, amount);
    expect(d.status, JSON.stringify(d.body)).toBe(200);
  }
}

describe('ringbook trader commands', { timeout: CLI_TEST_MS }, () => {
  let s: StartedServer;
  let U: string[];
  let maker: { private_key: string; address: string };
  let taker: { private_key: string; address: string };

  beforeAll(async () => {
    s = await startServer();
    U = ['--url', s.url];
    [maker, taker] = await Promise.all([keygen(), keygen()]);
  }, CLI_TEST_MS);

  afterAll(async () => {
    const r = await s?.stop();
    expect(r?.code).toBe(0);
  });

  it('--help works on every command', async () => {
    const cmds = ['deposit', 'order', 'cancel', 'cancel-after', 'agent', 'batch', 'balances', 'book', 'bench', 'market-maker', 'referral', 'force-include'];
    const [top, ...rs] = await Promise.all([cli(['--help']), ...cmds.map((c) => cli([c, '--help']))]);
    rs.forEach((r, i) => {
      expect(r.code, cmds[i]).toBe(0);
      expect(r.stdout, cmds[i]).toContain(`usage: ringbook ${cmds[i]}`);
    });
    expect(top.code).toBe(0);
    for (const c of cmds) expect(top.stdout).toContain(c);
  });

  it('usage errors exit 64', async () => {
    // Refused before any request is signed or sent: the processes can run side by side.
    const [r, side, cancel, balances, bad_url, bad_key] = await Promise.all([
      cli(['order', ...U, '--key', maker.private_key, '--market', 'ETH-USDC', '--side', 'bid', '--quantity', '1']),
      cli(['order', ...U, '--key', maker.private_key, '--market', 'ETH-USDC', '--side', 'up', '--price', '1', '--quantity', '1']),
      cli(['cancel', ...U, '--key', maker.private_key]),
      cli(['balances', ...U]),
      cli(['balances', '--address', maker.address], { RINGBOOK_URL: 'ftp://127.0.0.1:1' }),
      cli(['balances', ...U], { RINGBOOK_KEY: '0x1234' }),
    ]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('--price is required');
    expect(side.code).toBe(64);
    expect(cancel.code).toBe(64);
    expect(balances.code).toBe(64);
    // A bad RINGBOOK_URL or RINGBOOK_KEY is named as such (not as the flag the user never gave).
    expect(bad_url.code).toBe(64);
    expect(bad_url.stderr).toContain('RINGBOOK_URL: not an http:// or https:// URL: ftp://127.0.0.1:1');
    expect(bad_key.code).toBe(64);
    expect(bad_key.stderr).toContain('RINGBOOK_KEY: not a valid private key');
  });

  it('deposit, two crossing orders, balances show the trade', async () => {
    // Two accounts' deposits (admin calls, no nonce between them): side by side. d2: the admin
    // token from the environment; human output.
    const [d1, d2] = await Promise.all([
      cli(['deposit', ...U, '--admin-token', s.admin_token, '--user', maker.address, '--asset', 'ETH', '--amount', '2', '--json']),
      cli(['deposit', ...U, '--user', taker.address, '--asset', 'USDC', '--amount', '10000'], { RINGBOOK_ADMIN_TOKEN: s.admin_token }),
    ]);
    expect(d1.code, d1.stderr).toBe(0);
    expect(JSON.parse(d1.stdout).balance.available).toBe(2_000_000);
    expect(d2.code, d2.stderr).toBe(0);
    expect(d2.stdout).toContain('deposited 10000 USDC');

    const ask = await cli(['order', ...U, '--key', maker.private_key, '--market', 'ETH-USDC', '--side', 'ask', '--price', '2000', '--quantity', '1', '--client-id', 'mm-ask-1', '--json']);
    expect(ask.code, ask.stderr).toBe(0);
    const a = JSON.parse(ask.stdout);
    expect(a).toMatchObject({ status: 'open', side: 'ask', price: 2_000_000_000, quantity: 1_000_000, client_order_id: 'mm-ask-1' });

    // Taker key from RINGBOOK_KEY; human output lists the fill.
    const bid = await cli(['order', ...U, '--market', 'ETH-USDC', '--side', 'bid', '--price', '2000', '--quantity', '0.4'], { RINGBOOK_KEY: taker.private_key });
    expect(bid.code, bid.stderr).toBe(0);
    expect(bid.stdout).toMatch(/status\s+filled/);
    expect(bid.stdout).toContain('fills: 1');
    // The fee with its asset (the quote): 5 bps of 800 USDC.
    expect(bid.stdout).toMatch(/2000\s+0\.4\s+0\.4 USDC\s+taker/);

    // Two read-only views after the fill: side by side.
    const [tb, mb] = await Promise.all([cli(['balances', ...U, '--address', taker.address, '--json']), cli(['balances', ...U, '--key', maker.private_key])]);
    expect(tb.code, tb.stderr).toBe(0);
    const t = JSON.parse(tb.stdout);
    expect(t.assets.ETH.available).toBe(400_000);
    expect(t.assets.USDC.available).toBeLessThan(10_000_000_000 - 800_000_000 + 1);
    expect(mb.code, mb.stderr).toBe(0);
    expect(mb.stdout).toMatch(/ETH\s+1\s+0\.6\s+1\.6/); // 1 available, 0.6 locked in the resting ask
    expect(mb.stdout).toMatch(/USDC\s+800/);
  });

  it('book --once --json shows the resting order', async () => {
    // Two readers of the same book: side by side.
    const [r, h] = await Promise.all([cli(['book', 'ETH-USDC', ...U, '--once', '--json']), cli(['book', 'ETH-USDC', ...U, '--once'])]);
    expect(r.code, r.stderr).toBe(0);
    const b = JSON.parse(r.stdout);
    expect(b.market_id).toBe('ETH-USDC');
    expect(b.asks[0]).toMatchObject({ price: '2000', quantity: '0.6' });
    expect(b.bids).toEqual([]);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/ask\s+2000\s+0\.6/);
  });

  it('cancel by client id', async () => {
    const r = await cli(['cancel', ...U, '--key', maker.private_key, '--client-id', 'mm-ask-1', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'cancelled', client_order_id: 'mm-ask-1', filled_quantity: 400_000 });
    const again = await cli(['cancel', ...U, '--key', maker.private_key, '--client-id', 'mm-ask-1']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('NOT_FOUND');
  });

  it('cancel-after arms and disarms the dead-man switch; a bad timeout is the server\'s INVALID_REQUEST', async () => {
    const armed = await cli(['cancel-after', '60000', ...U, '--key', taker.private_key, '--json']);
    expect(armed.code, armed.stderr).toBe(0);
    const deadline = Date.parse(JSON.parse(armed.stdout).deadline);
    expect(Math.abs(deadline - (Date.now() + 60_000))).toBeLessThan(10_000);
    const off = await cli(['cancel-after', '0', ...U, '--key', taker.private_key]);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain('disarmed');
    // The usage error sends nothing: beside the refused call.
    const [bad, usage] = await Promise.all([cli(['cancel-after', '10', ...U, '--key', taker.private_key]), cli(['cancel-after', ...U, '--key', taker.private_key])]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('INVALID_REQUEST');
    expect(usage.code).toBe(64);
  });

  it('agent approve / list / revoke; an agent key orders and cancels with --for, and is refused once revoked', async () => {
    const user = freshKey();
    const hot = freshKey();
    await fund(s, user.address, [['USDC', '1000']]);
    const approved = await cli(['agent', 'approve', hot.address, '--name', 'cli-bot', ...U, '--key', user.private_key, '--json']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ user: user.address, agent: hot.address, name: 'cli-bot' });
    // The listing reads what the approval wrote; the order needs only the approval: side by side.
    const [listed, placed] = await Promise.all([
      cli(['agent', 'list', user.address, ...U]),
      cli(['order', ...U, '--key', hot.private_key, '--for', user.address, '--market', 'ETH-USDC', '--side', 'bid', '--price', '100', '--quantity', '1', '--client-id', 'via-agent', '--json']),
    ]);
    expect(listed.stdout).toContain(hot.address);
    expect(listed.stdout).toContain('cli-bot');
    expect(placed.code, placed.stderr).toBe(0);
    expect(JSON.parse(placed.stdout)).toMatchObject({ client_order_id: 'via-agent', status: 'open' });
    // The user's order (the body's user), not the key's.
    expect((await api(s.url).get(`/account/${user.address}/orders/by-client-id/via-agent`)).status).toBe(200);
    const cancelled = await cli(['cancel', ...U, '--key', hot.private_key, '--for', user.address, '--client-id', 'via-agent']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    // The agent key alone is no account of its own.
    const own = await cli(['order', ...U, '--key', hot.private_key, '--market', 'ETH-USDC', '--side', 'bid', '--price', '100', '--quantity', '1']);
    expect(own.code).toBe(1);
    expect(own.stderr).toContain('INSUFFICIENT_BALANCE');
    const revoked = await cli(['agent', 'revoke', hot.address, ...U, '--key', user.private_key]);
    expect(revoked.code, revoked.stderr).toBe(0);
    // Each of these needs only the revocation (the last a usage error, sending nothing): side by side.
    const [refused, after, nope] = await Promise.all([
      cli(['order', ...U, '--key', hot.private_key, '--for', user.address, '--market', 'ETH-USDC', '--side', 'bid', '--price', '100', '--quantity', '1']),
      cli(['agent', 'list', user.address, ...U]),
      cli(['agent', 'approve', 'nope', ...U, '--key', user.private_key]),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('INVALID_SIGNATURE');
    expect(after.stdout).toContain('no live agents');
    expect(nope.code).toBe(64);
  });

  it('referral register / show and force-include --wait', async () => {
    const reg = await cli(['referral', 'register', ...U, '--key', taker.private_key, '--referrer', maker.address, '--json']);
    expect(reg.code, reg.stderr).toBe(0);
    expect(JSON.parse(reg.stdout)).toMatchObject({ referred: taker.address, referrer: maker.address });
    // The second registration and the (read-only) statistics both follow the first: side by side.
    const [again, show] = await Promise.all([
      cli(['referral', 'register', ...U, '--key', taker.private_key, '--referrer', maker.address]),
      cli(['referral', 'show', maker.address, ...U, '--json']),
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('REFERRAL_EXISTS');
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ referred_users: 1 });
    const forced = await cli(['force-include', 'order', ...U, '--key', taker.private_key, '--market', 'ETH-USDC', '--side', 'bid',
      '--price', '100', '--quantity', '0.1', '--client-id', 'cli-forced', '--wait', '--timeout', '15', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
    const f = JSON.parse(forced.stdout);
    expect(f.queued.status).toBe('pending');
    expect(f.status).toMatchObject({ status: 'included', result: { accepted: true } });
    // An order for more than the wallet holds is refused at inclusion: exit 1 with its code.
    const refused = await cli(['force-include', 'order', ...U, '--key', taker.private_key, '--market', 'ETH-USDC', '--side', 'bid',
      '--price', '100000', '--quantity', '100', '--wait', '--timeout', '15']);
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).toContain('INSUFFICIENT_BALANCE');
  });

  it('a rejected order exits 1 with the code', async () => {
    const r = await cli(['order', ...U, '--key', taker.private_key, '--market', 'ETH-USDC', '--side', 'bid', '--price', '2000', '--quantity', '100']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('INSUFFICIENT_BALANCE');
    const j = await cli(['order', ...U, '--key', taker.private_key, '--market', 'NOPE-USDC', '--side', 'bid', '--price', '1', '--quantity', '1', '--json']);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: 'MARKET_NOT_FOUND' });
  });

  it('order --json keeps the answer\'s fill fields (the fee as a number, its asset not added)', async () => {
    const [m, t] = [Wallet.random(), Wallet.random()];
    expect((await deposit(s, m.address, 'ETH', '1')).status).toBe(200);
    expect((await deposit(s, t.address, 'USDC', '1000')).status).toBe(200);
    const ask = await api(s.url).post('/orders', m.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_500_000_000, quantity: 10_000 }));
    expect(ask.status, ask.text).toBe(200);
    const key = '0x' + Buffer.from(t.priv).toString('hex');
    const bid = ok(await cli(['order', ...U, '--key', key, '--market', 'ETH-USDC', '--side', 'bid', '--price', '2500', '--quantity', '0.01', '--json']));
    const fills = JSON.parse(bid.stdout).fills as Record<string, unknown>[];
    expect(fills.map((f) => Object.keys(f).sort())).toEqual([['fee', 'fill_id', 'is_maker', 'price', 'quantity']]);
    expect(fills[0]).toMatchObject({ price: 2_500_000_000, quantity: 10_000, fee: 12_500, is_maker: false }); // 5 bps of 25 USDC, in units
  });

  it('bench --url runs a small load loop', async () => {
    const r = await cli(['bench', ...U, '--admin-token', s.admin_token, '--wallets', '4', '--orders-per-wallet', '5', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const b = JSON.parse(r.stdout);
    expect(b.accepted).toBe(20);
    expect(b.orders_per_s).toBeGreaterThan(0);
    expect(b.p99_ms).toBeGreaterThanOrEqual(b.p50_ms);
  });

  it('order --stp and --expires-after-ms; batch FILE answers per item', async () => {
    const w = freshKey();
    await fund(s, w.address, [['ETH', '1'], ['USDC', '10000']]);
    const K = ['--key', w.private_key];
    const ask = await cli(['order', ...U, ...K, '--market', 'BTC-USDC', '--side', 'ask', '--price', '1', '--quantity', '0.0001', '--json']);
    expect(ask.code, ask.stderr).toBe(1); // no BTC: INSUFFICIENT_BALANCE
    const own = JSON.parse((await cli(['order', ...U, ...K, '--market', 'ETH-USDC', '--side', 'ask', '--price', '3333.33', '--quantity', '0.01', '--json'])).stdout);
    const taker = await cli(['order', ...U, ...K, '--market', 'ETH-USDC', '--side', 'bid', '--price', '3333.33', '--quantity', '0.01', '--stp', 'expire_taker', '--json']);
    expect(taker.code, taker.stderr).toBe(0);
    expect(JSON.parse(taker.stdout)).toMatchObject({ status: 'cancelled', filled_quantity: 0 });
    const stale = await cli(['order', ...U, ...K, '--market', 'ETH-USDC', '--side', 'bid', '--price', '1000', '--quantity', '0.01', '--expires-after-ms', '1000']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('EXPIRED');
    expect((await cli(['order', ...U, ...K, '--market', 'ETH-USDC', '--side', 'bid', '--price', '1', '--quantity', '1', '--stp', 'never'])).code).toBe(64);

    const file = path.join(s.data_dir, 'batch.json');
    fs.writeFileSync(file, JSON.stringify([
      { kind: 'order', market_id: 'ETH-USDC', side: 'bid', price: '1000', quantity: '0.01', client_order_id: 'cli-b1', time_in_force: 'post_only' },
      { kind: 'order', market_id: 'ETH-USDC', side: 'bid', price: '1000.001', quantity: '0.01' },
      { kind: 'cancel', client_order_id: 'cli-b1' },
      { kind: 'cancel_all', market_id: 'ETH-USDC' },
    ]));
    const b = await cli(['batch', file, ...U, ...K, '--json']);
    expect(b.code).toBe(1); // one item failed
    const results = JSON.parse(b.stdout);
    expect(results.map((r: { ok: boolean }) => r.ok)).toEqual([true, false, true, true]);
    expect(results[1].error).toBe('INVALID_ORDER');
    expect(results[3].data.cancelled.map((o: { order_id: number }) => o.order_id)).toEqual([own.order_id]);
    const table = await cli(['batch', file, ...U, ...K]);
    expect(table.stdout).toMatch(/INVALID_ORDER/);
    expect((await cli(['batch', path.join(s.data_dir, 'missing.json'), ...U, ...K])).code).toBe(64);
  });

  /**
   * A funded key and the example market maker running on it with `flags` (with `agent`: on a hot
   * key the funded key approved, `--for` it); `out()` is its output so far.
   */
  async function runMarketMaker(flags: string[], agent = false): Promise<{ mm: { private_key: string; address: string }; child: ReturnType<typeof spawn>; out: () => string }> {
    const mm = freshKey();
    await fund(s, mm.address, [['ETH', '5'], ['USDC', '20000']]);
    let key = ['--key', mm.private_key];
    if (agent) {
      // Approved over HTTP: `ringbook agent approve` is the agent test's subject.
      const hot = freshKey();
      const approved = await api(s.url).post('/agents', mm.wallet.approveAgent(hot.address, 'mm-bot', Date.now() + AGENT_VALID_MS));
      expect(approved.status, approved.text).toBe(200);
      key = ['--key', hot.private_key, '--for', mm.address];
    }
    const child = spawn(process.execPath, [
      path.join(REPO_ROOT, 'dist', 'src', 'cli', 'market_maker.js'), ...U, ...key, '--market', 'ETH-USDC', ...flags,
    ], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    return { mm, child, out: () => out };
  }

  it('the market maker quotes, requotes and leaves no open orders after SIGTERM', async () => {
    const { mm, child, out: output } = await runMarketMaker(['--price', '1990', '--quantity', '0.1', '--interval', '0.3', '--walk-bps', '20']);
    let out = output();
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // Two requotes 0.3 s apart once the bot runs; its start and first quotes take seconds on a loaded machine.
    const deadline = Date.now() + 60_000;
    while (((out = output()).match(/requoted in one batch/g) ?? []).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    // Each requote is one batch over the WebSocket: cancel-all, then the bid and the ask.
    expect(out).toMatch(/requoted in one batch: cancelled 0, bid 0\.1 @ [\d.]+ \(order \d+, open\), ask 0\.1 @ [\d.]+ \(order \d+, open\)/);
    expect(out).toMatch(/requoted in one batch: cancelled 2, bid/);
    const during = await cli(['balances', ...U, '--address', mm.address, '--json']);
    expect(JSON.parse(during.stdout).assets.ETH.locked).toBe(100_000);
    child.kill('SIGTERM');
    expect(await exited, output()).toBe(0);
    expect(output()).toContain('shutdown: cancelled 2 orders');
    const after = JSON.parse((await cli(['balances', ...U, '--address', mm.address, '--json'])).stdout);
    expect(after.assets.ETH).toEqual({ available: 5_000_000, locked: 0 });
    expect(after.assets.USDC.locked).toBe(0);
  });

  it('the market maker on an agent key arms the dead-man switch: after kill -9 the exchange cancels its quotes', async () => {
    const { mm, child, out } = await runMarketMaker(['--price', '1980', '--quantity', '0.1', '--interval', '5', '--dead-man-ms', '3000'], true);
    const locked = async (): Promise<number> => {
      const b = (await api(s.url).get(`/account/${mm.address}/balances`)).body.data;
      return b.ETH.locked + b.USDC.locked;
    };
    const deadline = Date.now() + 60_000;
    while (!/requoted in one batch: .*ask 0\.1/.test(out()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(out()).toMatch(/dead-man switch armed: 3000 ms/);
    expect(out()).toMatch(/market maker 0x[0-9a-f]{40} \(agent key 0x[0-9a-f]{40}\)/);
    // Re-armed every second: the quotes outlive the first deadline while the bot lives. Not a
    // fixed 3.5 s: wait on the clock until the first arming's deadline (as the server answered it)
    // has passed, then a barrier: a deposit answered in a batch timed after it, by which the switch
    // had fired if it was not re-armed.
    const armed = /dead-man switch armed: 3000 ms, deadline (\S+)/.exec(out());
    expect(armed, out()).not.toBeNull();
    const first_deadline_ms = Date.parse(armed![1]);
    expect(Number.isFinite(first_deadline_ms), armed![1]).toBe(true);
    await new Promise((r) => setTimeout(r, Math.max(0, first_deadline_ms + 1 - Date.now())));
    while (Date.now() <= first_deadline_ms) await new Promise((r) => setTimeout(r, 1)); // a timer may fire a ms early
    const barrier = await deposit(s, mm.address, 'USDC', '1');
    expect(barrier.status, JSON.stringify(barrier.body)).toBe(200);
    expect(await locked(), out()).toBeGreaterThan(0);
    child.kill('SIGKILL');
    // How soon the switch fires is the machine's scheduling: 30 s is only a hang guard.
    let left = -1;
    for (let i = 0; i < 300; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = await locked();
      if (left === 0) break;
    }
    expect(left, `quotes still locked 30 s after kill -9 (hang guard)\n${out()}`).toBe(0);
  });
});
