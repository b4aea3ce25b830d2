// The SDK's Agent wallet type against a real server: a client built on an Agent trades for its
// user with its own nonces (concurrently with the user's client), arms the dead-man switch, and
// is refused (InvalidSignatureError) for withdrawals and agent changes and once revoked.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Agent, InvalidSignatureError, RingbookClient, Wallet } from '../../src/client/index.js';
import type { StartedServer } from '../server/harness.js';
import { serverPerFile } from '../server/per_file.js';
import { randomWallet } from './helpers.js';

describe('RingbookClient with an Agent (real server)', () => {
  let s: StartedServer;
  let user: RingbookClient;
  let bot: RingbookClient;
  let agent: Agent;

  serverPerFile((started) => {
    s = started;
  });
  beforeAll(async () => {
    const admin = new RingbookClient({ base_url: s.url, admin_token: s.admin_token });
    const w: Wallet = randomWallet();
    user = new RingbookClient({ base_url: s.url, wallet: w });
    await admin.deposit({ user: w.address, asset: 'USDC', amount: '100000' });
    agent = new Agent('0x' + randomBytes(32).toString('hex'), w.address);
    bot = new RingbookClient({ base_url: s.url, wallet: agent });
  });

  it('approves, trades for the user with its own nonces, lists, is refused for money and keys, and after revocation', async () => {
    expect(() => new Agent('0x' + '11'.repeat(32), 'not-an-address')).toThrow(TypeError);
    const approval = await user.approveAgent(agent.agent_address, 'sdk-bot', Date.now() + 3_600_000);
    expect(approval).toMatchObject({ user: user.wallet!.address, agent: agent.agent_address, name: 'sdk-bot' });
    // The user's client and the agent's client place at once: separate nonce marks, no retries needed.
    const placed = await Promise.all([
      ...[0, 1, 2].map((k) => bot.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000 + k * 10_000_000, quantity: 100_000 })),
      ...[0, 1, 2].map((k) => user.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1_500_000_000 + k * 10_000_000, quantity: 100_000 })),
    ]);
    expect(placed.every((o) => o.status === 'open')).toBe(true);
    expect((await user.orders({ status: 'open' })).length).toBe(6);
    expect((await bot.armDeadMan(60_000)).deadline).not.toBeNull();
    await bot.armDeadMan(0);
    const list = await bot.agents();
    expect(list.agents).toEqual([expect.objectContaining({ agent: agent.agent_address, name: 'sdk-bot' })]);
    expect(await bot.syncNonce()).toBe(list.agents[0].nonce_high_water);
    await expect(bot.withdraw({ asset: 'USDC', amount: '1' })).rejects.toBeInstanceOf(InvalidSignatureError);
    await expect(bot.approveAgent(randomWallet().address, 'x', Date.now() + 60_000)).rejects.toBeInstanceOf(InvalidSignatureError);
    expect((await bot.cancelAll()).cancelled.length).toBe(6);
    await user.revokeAgent(agent.agent_address);
    await expect(bot.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100_000 })).rejects.toBeInstanceOf(InvalidSignatureError);
    expect((await user.agents()).agents).toEqual([]);
  });
});
