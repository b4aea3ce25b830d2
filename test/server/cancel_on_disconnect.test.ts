// Cancel on disconnect on the real server (DECISIONS "Cancel on disconnect"): a client process
// authenticates a WebSocket, opts in, and is killed with SIGKILL; within one second no order of
// its address rests. Only the closing connection's own opt-in counts: closing a second,
// non-opted connection of the same address cancels nothing. The cancel is an operator request
// (rule cancel_on_disconnect) in the DA batch, and `ringbook verify` agrees on every root.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RingbookSocket, Wallet as SdkWallet } from '../../src/client/index.js';
import { ok } from './checks.js';
import { api, bytesToHex, caughtUpState, deposit, REPO_ROOT, runVerifier, startServer, type StartedServer, Wallet } from './harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { metricValue } from './metrics_scrape.js';

const tempDir = tempDirsPerFile('ringbook-cod-');

/** A market maker's process: authenticates, opts in, says "ready", then idles until killed. */
const CHILD = `
import { RingbookSocket, Wallet } from ${JSON.stringify(path.join(REPO_ROOT, 'dist', 'src', 'client', 'index.js'))};
const socket = new RingbookSocket({ url: process.env.URL, wallet: new Wallet(process.env.KEY), reconnect: false });
await socket.connect();
await socket.cancelOnDisconnect();
process.stdout.write('ready\\n');
setInterval(() => {}, 1000);
`;

function spawnClient(s: StartedServer, key_hex: string): Promise<ChildProcess> {
  const dir = tempDir();
  const file = path.join(dir, 'client.mjs');
  fs.writeFileSync(file, CHILD);
  const p = spawn(process.execPath, [file], { env: { ...process.env, URL: s.url, KEY: key_hex }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`client not ready in 10 s: ${err}`)), 10_000);
    p.stderr!.on('data', (d) => (err += d));
    p.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('ready')) {
        clearTimeout(timer);
        resolve(p);
      }
    });
    p.once('exit', (code) => reject(new Error(`client exited (${code}): ${err}`)));
  });
}

async function openCount(s: StartedServer, address: string): Promise<number> {
  return (ok(await api(s.url).get(`/account/${address}/orders?status=open&limit=100`)) as unknown[]).length;
}

/** Polls a gauge until it reads `want`; the 30 s limit is a hang guard, not a speed bound. */
async function untilMetric(s: StartedServer, name: string, want: number, what: string): Promise<void> {
  const hang_guard_at = Date.now() + 30_000;
  let seen = await metricValue(s, name);
  while (seen !== want) {
    if (Date.now() > hang_guard_at) throw new Error(`${what}: ${name} still ${seen} (want ${want}) after 30 s (a hang)`);
    await new Promise((r) => setTimeout(r, 20));
    seen = await metricValue(s, name);
  }
}

async function quote(s: StartedServer, w: Wallet, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    ok(await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: i % 2 === 0 ? 'bid' : 'ask', price: (i % 2 === 0 ? 1_900 - i : 2_100 + i) * 1_000_000, quantity: 10_000 })));
  }
}

describe('cancel on disconnect (WebSocket)', () => {
  it('kill -9 of an opted-in client leaves no order of its address; verify agrees', async () => {
    const s = await startServer();
    try {
      const mm = Wallet.random();
      const other = Wallet.random();
      const key_hex = '0x' + bytesToHex(mm.priv);
      ok(await deposit(s, mm.address, 'USDC', '100000'));
      ok(await deposit(s, mm.address, 'ETH', '10'));
      ok(await deposit(s, other.address, 'USDC', '100000'));
      await quote(s, mm, 6);
      ok(await api(s.url).post('/orders', other.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_800_000_000, quantity: 10_000 })));

      // A second connection of the same address, not opted in, opens and closes: nothing happens.
      const passive = new RingbookSocket({ url: s.url, wallet: new SdkWallet(key_hex), reconnect: false });
      await passive.connect();
      const child = await spawnClient(s, key_hex);
      passive.close();
      // A positive barrier, not a sleep: the hub counts the close once its handler ran (which
      // submits any cancel there and then), and a later order of the same address is answered
      // after its batch commits: a cancel from the close would have run before it, leaving 1.
      await untilMetric(s, 'ringbook_ws_connections', 1, 'the passive close seen by the server');
      await quote(s, mm, 1);
      expect(await openCount(s, mm.address)).toBe(7);

      const killed_at = Date.now();
      child.kill('SIGKILL');
      let gone_ms = -1;
      // How soon the cancel lands after the kill is the machine's scheduling: the 20 s limit only
      // catches a disconnect that never cancels.
      while (Date.now() - killed_at < 20_000) {
        if (await openCount(s, mm.address) === 0) {
          gone_ms = Date.now() - killed_at;
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(gone_ms, 'the dropped connection cancelled its orders').toBeGreaterThanOrEqual(0);
      expect(await openCount(s, other.address)).toBe(1);

      // The cancel is an operator request under its rule in the published batch.
      const st = await caughtUpState(s);
      let found = false;
      for (let id = Number(st.batch_id); id >= 1 && !found; id--) {
        const b = ok(await api(s.url).get(`/da/batches/${id}`));
        const reqs = (b.requests ?? b.inputs?.requests ?? []) as { kind: string; origin: string; operator_rule: string | null; user: string }[];
        found = reqs.some((r) => r.kind === 'disconnect_cancel' && r.origin === 'operator' && r.operator_rule === 'cancel_on_disconnect' && r.user === mm.address);
      }
      expect(found).toBe(true);

      const v = await runVerifier(s.url, path.join(s.data_dir, 'test-config.json'));
      expect(v.code, v.stderr).toBe(0);
      expect((await s.stop()).code).toBe(0);
    } finally {
      await s.stop();
    }
  }, 60_000);

  it('refuses the opt-in before auth and a malformed one; acknowledges with the same message', async () => {
    const s = await startServer();
    try {
      const ws = new WebSocket(s.url.replace('http', 'ws') + '/ws');
      const replies: Record<string, unknown>[] = [];
      ws.on('message', (d) => replies.push(JSON.parse(String(d))));
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      ws.send(JSON.stringify({ type: 'cancel_on_disconnect', enabled: true, request_id: 'a' }));
      ws.send(JSON.stringify({ type: 'cancel_on_disconnect', enabled: 'yes', request_id: 'b' }));
      // Both replies, waited for (a 2 s poll could end first on a loaded machine); 30 s: hang guard.
      for (let i = 0; i < 1_500 && replies.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(replies.length, 'two replies within 30 s (hang guard)').toBe(2);
      expect(replies).toEqual([
        expect.objectContaining({ type: 'error', code: 'UNAUTHORIZED', request_id: 'a' }),
        expect.objectContaining({ type: 'error', code: 'INVALID_REQUEST', request_id: 'b' }),
      ]);
      ws.close();
      // The SDK needs a wallet for it, and an authenticated socket gets the acknowledgement.
      const anon = new RingbookSocket({ url: s.url, reconnect: false });
      await expect(anon.cancelOnDisconnect()).rejects.toThrow(/wallet/);
      const authed = new RingbookSocket({ url: s.url, wallet: new SdkWallet('0x' + bytesToHex(Wallet.random().priv)), reconnect: false });
      await authed.connect();
      await expect(authed.cancelOnDisconnect()).resolves.toBeUndefined();
      authed.close();
      expect((await s.stop()).code).toBe(0);
    } finally {
      await s.stop();
    }
  }, 30_000);
});
