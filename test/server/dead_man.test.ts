// The dead-man switch on the real server (DECISIONS "Dead-man switch"): POST /orders/cancel-after
// arms a deadline at batch time + timeout; on an idle server the sequencer opens a batch by itself
// when it falls due and cancels every resting order of the user; the cancel is engine state, so
// a restart replays it identically (same root) and `ringbook verify` re-executes the chain.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fail, ok } from './checks.js';
import { api, balances, caughtUpState, deposit, runVerifier, startServer, type StartedServer, Wallet } from './harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tempDir = tempDirsPerFile('ringbook-deadman-');

async function openOrders(s: StartedServer, w: Wallet): Promise<{ order_id: string; status: string }[]> {
  return ok(await api(s.url).get(`/account/${w.address}/orders?status=open&limit=100`));
}

describe('dead-man switch (POST /orders/cancel-after)', () => {
  it('a 1-second switch on an idle server cancels, in a batch at or after its deadline; the cancel replays identically after a restart; verify agrees', async () => {
    const data_dir = tempDir();
    const env = { RINGBOOK_DATA_DIR: data_dir };
    let s = await startServer({ env });
    try {
      const a = api(s.url);
      const mm = Wallet.random();
      const other = Wallet.random();
      ok(await deposit(s, mm.address, 'USDC', '100000'));
      ok(await deposit(s, mm.address, 'ETH', '10'));
      ok(await deposit(s, other.address, 'USDC', '100000'));
      const bid = ok(await a.post('/orders', mm.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_900_000_000, quantity: 100_000 })));
      ok(await a.post('/orders', mm.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_100_000_000, quantity: 100_000 })));
      ok(await a.post('/orders', other.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_800_000_000, quantity: 100_000 })));

      // Bad input first: nothing is armed by a refused request.
      fail(await a.post('/orders/cancel-after', mm.cancelAfter(999)), 400, 'INVALID_REQUEST', /timeout_ms/);
      fail(await a.post('/orders/cancel-after', mm.cancelAfter(86_400_001)), 400, 'INVALID_REQUEST');
      fail(await a.post('/orders/cancel-after', mm.cancelAfter(5_000, { signer: (m) => other.sign(m) })), 401, 'INVALID_SIGNATURE');
      fail(await a.post('/orders/cancel-after', { ...mm.cancelAfter(5_000), timeout_ms: '5000' }), 400, 'INVALID_REQUEST');
      // Arm for an hour, then disarm: the answer says so.
      expect(ok(await a.post('/orders/cancel-after', mm.cancelAfter(3_600_000))).deadline).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(ok(await a.post('/orders/cancel-after', mm.cancelAfter(0))).deadline).toBeNull();
      expect((await openOrders(s, mm)).length).toBe(2);

      const armed_at = Date.now();
      const armed = ok(await a.post('/orders/cancel-after', mm.cancelAfter(1_000)));
      const answered_at = Date.now();
      const deadline_ms = Date.parse(armed.deadline);
      // The deadline is 1 s after the server took the request: bracketed by the request's send and
      // answer times (same machine clock; 50 ms for ISO rounding and clock sources), not by a
      // guess at how long the answer took.
      expect(deadline_ms).toBeGreaterThanOrEqual(armed_at + 1_000 - 50);
      expect(deadline_ms).toBeLessThanOrEqual(answered_at + 1_000 + 50);
      // Nothing else is sent: the server is idle, the sequencer must open the batch itself. The
      // orders must go; how soon after the deadline is the CI machine's scheduling, so the poll's
      // 20 s limit only catches a switch that never fires (a hang guard, not a bound).
      let gone = false;
      for (const polled_from = Date.now(); !gone && Date.now() - polled_from < 20_000;) {
        gone = (await openOrders(s, mm)).length === 0;
        if (!gone) await new Promise((r) => setTimeout(r, 50));
      }
      expect(gone, 'the armed switch cancelled the orders of an idle server (none gone after 20 s)').toBe(true);
      const all: { order_id: string; status: string; updated_at: string }[] = ok(await a.get(`/account/${mm.address}/orders?status=all&limit=100`));
      const cancelled = all.find((o) => String(o.order_id) === String(bid.order_id));
      expect(cancelled?.status).toBe('cancelled');
      // Never before the deadline, in the engine's own time: the batch that cancelled it (its
      // updated_at, the batch time) is at or after the deadline, itself a batch time plus 1 s.
      // The wall clock of this poll would say only when the test looked.
      expect(Date.parse(cancelled!.updated_at), 'cancelled in a batch before the deadline').toBeGreaterThanOrEqual(deadline_ms);
      // Only the armed user's orders go; the switch disarmed itself.
      expect((await openOrders(s, other)).length).toBe(1);
      const bal = await balances(s, mm.address);
      expect(bal.USDC.locked).toBe(0);
      expect(bal.ETH.locked).toBe(0);

      const before = await caughtUpState(s);
      await s.stop('SIGKILL');
      s = await startServer({ env });
      const after = await caughtUpState(s);
      expect(after.batch_id).toBe(before.batch_id);
      expect(after.state_root).toBe(before.state_root);
      expect((await openOrders(s, mm)).length).toBe(0);
      expect((await openOrders(s, other)).length).toBe(1);

      const v = await runVerifier(s.url, path.join(s.data_dir, 'test-config.json'));
      expect(v.code, v.stderr).toBe(0);
      expect(JSON.parse(v.stdout.trim().split('\n').pop()!)).toMatchObject({ verify: 'ok', state_root: after.state_root });
      expect((await s.stop()).code).toBe(0);
    } finally {
      await s.stop();
    }
  }, 60_000);
});
