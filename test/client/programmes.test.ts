// The SDK's referral and forced-inclusion methods against a real server.
import { beforeAll, describe, expect, it } from 'vitest';
import { ReferralExistsError, RingbookClient } from '../../src/client/index.js';
import type { StartedServer } from '../server/harness.js';
import { serverPerFile } from '../server/per_file.js';
import { randomWallet } from './helpers.js';

describe('RingbookClient: referrals and forced inclusion (real server)', () => {
  let s: StartedServer;
  let admin: RingbookClient;
  let referrer: RingbookClient;
  let user: RingbookClient;

  serverPerFile((started) => {
    s = started;
  });
  beforeAll(async () => {
    admin = new RingbookClient({ base_url: s.url, admin_token: s.admin_token });
    referrer = new RingbookClient({ base_url: s.url, wallet: randomWallet() });
    user = new RingbookClient({ base_url: s.url, wallet: randomWallet() });
    for (const c of [referrer, user]) {
      await admin.deposit({ user: c.wallet!.address, asset: 'USDC', amount: '100000' });
      await admin.deposit({ user: c.wallet!.address, asset: 'ETH', amount: '10' });
    }
  });

  it('registers a referral once and reads the stats of both sides', async () => {
    const reg = await user.registerReferral({ referrer: referrer.wallet!.address });
    expect(reg).toMatchObject({ referred: user.wallet!.address, referrer: referrer.wallet!.address });
    await expect(user.registerReferral({ referrer: referrer.wallet!.address })).rejects.toBeInstanceOf(ReferralExistsError);
    const stats = await referrer.referral();
    expect(stats.referred_users).toBe(1);
    expect(stats.active_referrals.map((r) => r.address)).toEqual([user.wallet!.address]);
    expect((await user.referral()).referred_by?.referrer).toBe(referrer.wallet!.address);
  });

  it('forces an order in and waits for its inclusion; envelope and payload nonces are separate sequences', async () => {
    const queued = await user.forceInclude({
      kind: 'order', market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 500_000, client_order_id: 'sdk-forced',
    });
    expect(queued.status).toBe('pending');
    expect(queued.nonce).toBe(user.envelope_nonces.last);
    expect(queued.payload_nonce).toBe(user.nonces.last);
    const done = await user.waitForInclusion(queued.entry_id, { interval_ms: 50, timeout_ms: 10_000 });
    expect(done.result?.accepted).toBe(true);
    const order = await user.orderByClientId('sdk-forced');
    expect(order).toMatchObject({ order_id: done.result!.order_id, status: 'open' });
    // A plain signed request right after uses a nonce above the payload's.
    await user.cancel({ order_id: done.result!.order_id! });
    expect((await user.orders({ status: 'all' })).find((o) => o.order_id === done.result!.order_id)?.status).toBe('cancelled');
    const b = await user.balances();
    expect(b.envelope_nonce_high_water).toBe(queued.nonce);
    expect(b.nonce_high_water).toBe(user.nonces.last);
  });
});
