// Withdrawals on the real server: on-chain units (wei for ETH), the 10^12 rule, balances,
// and the operator signature, recovered with noble over an independently built digest.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { describe, expect, it } from 'vitest';
import {
  addressOfPublicKey, adminState, balances, bytesToHex, hexToBytes, keccak_256, personalHash, recoverAddress,
  Wallet, type Api, type StartedServer,
} from './harness.js';
import { serverPerFile } from './per_file.js';
import { fail, fundedWallet, ok, snapshot } from './checks.js';

const OPERATOR_KEY = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const OPERATOR_ADDRESS = addressOfPublicKey(secp256k1.getPublicKey(hexToBytes(OPERATOR_KEY), false));
const CONTRACT = '0x1111111111111111111111111111111111111111';
const CHAIN_ID = 8453;
const ZERO = '0x0000000000000000000000000000000000000000';
const USDC_TOKEN = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const BTC_TOKEN = '0x2260fac5e5542a773aa44fbcfedf7c193bc2c599';

let s: StartedServer;
let a: Api;

serverPerFile((started, client) => {
  s = started;
  a = client;
}, {
  config: { settlement: { contract: CONTRACT, chain_id: CHAIN_ID } },
  env: { RINGBOOK_OPERATOR_KEY: '0x' + OPERATOR_KEY },
});

function word(hex_or_int: string | bigint): string {
  if (typeof hex_or_int === 'bigint') return hex_or_int.toString(16).padStart(64, '0');
  return hex_or_int.replace(/^0x/, '').toLowerCase().padStart(64, '0');
}

/** keccak256(abi.encode(contract, chain_id, user, asset_address, amount_wei, nonce)), built here. */
function withdrawalDigest(user: string, asset_address: string, amount_wei: bigint, nonce: number): Uint8Array {
  const encoded = word(CONTRACT) + word(BigInt(CHAIN_ID)) + word(user) + word(asset_address) + word(amount_wei) + word(BigInt(nonce));
  expect(encoded.length).toBe(6 * 64);
  return keccak_256(hexToBytes(encoded));
}

const funded = (assets: Record<string, string>): Promise<Wallet> => fundedWallet(s, assets);

describe('operator identity', () => {
  it('admin state reports the operator address of RINGBOOK_OPERATOR_KEY and the configured settlement', async () => {
    const st = await adminState(s);
    expect(st.operator_address).toBe(OPERATOR_ADDRESS);
    expect(st.settlement).toEqual({ contract: CONTRACT, chain_id: CHAIN_ID, assets: { ETH: ZERO, BTC: BTC_TOKEN, USDC: USDC_TOKEN }, link: null });
  });
});

describe('POST /withdrawals and POST /withdrawal-signature', () => {
  it('ETH in wei: debits available at once, and the operator signature recovers to the operator', async () => {
    const w = await funded({ ETH: '2' });
    const body = w.withdraw('ETH', '500000000000000000'); // 0.5 ETH
    const r = ok(await a.post('/withdrawals', body));
    expect(r).toEqual({
      address: w.address, asset: 'ETH', amount: '500000000000000000', amount_units: 500_000, nonce: body.nonce, status: 'pending',
    });
    const b = await balances(s, w.address);
    expect(b.ETH).toEqual({ available: 1_500_000, locked: 0 });
    expect(b.nonce_high_water).toBe(body.nonce);

    const sig = ok(await a.post('/withdrawal-signature', { user: w.address, asset: 'ETH', amount: '0.5', nonce: body.nonce }));
    expect(sig).toEqual({
      signature: expect.stringMatching(/^0x[0-9a-f]{130}$/), user: w.address, asset: ZERO, amount_wei: '500000000000000000', nonce: body.nonce,
    });
    const digest = withdrawalDigest(w.address, ZERO, 500_000_000_000_000_000n, body.nonce as number);
    // personal_sign over the 32 raw digest bytes.
    expect(recoverAddress(personalHash(digest), sig.signature)).toBe(OPERATOR_ADDRESS);
    expect(recoverAddress(personalHash(digest), sig.signature)).toBe((await adminState(s)).operator_address);
    // v is 27/28 and s is low.
    const v = parseInt(sig.signature.slice(130), 16);
    expect([27, 28]).toContain(v);
    expect(BigInt('0x' + sig.signature.slice(66, 130))).toBeLessThanOrEqual(0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n);
    // Asking again gives the same (deterministic) signature; the pending withdrawal is not consumed.
    const again = ok(await a.post('/withdrawal-signature', { user: w.address.toUpperCase().replace('0X', '0x'), asset: 'ETH', amount: '0.500000', nonce: body.nonce }));
    expect(again.signature).toBe(sig.signature);
  });

  it('USDC and BTC: amounts in the token\'s smallest unit; the signature names the token address', async () => {
    const w = await funded({ USDC: '100', BTC: '2' });
    const u = w.withdraw('USDC', '2500000'); // 2.5 USDC (6 decimals = engine units)
    expect(ok(await a.post('/withdrawals', u))).toMatchObject({ asset: 'USDC', amount: '2500000', amount_units: 2_500_000 });
    const bt = w.withdraw('BTC', '150000000'); // 1.5 BTC in satoshi (8 decimals: 1 engine unit = 100 sat)
    expect(ok(await a.post('/withdrawals', bt))).toMatchObject({ asset: 'BTC', amount: '150000000', amount_units: 1_500_000 });
    const b = await balances(s, w.address);
    expect(b.USDC.available).toBe(97_500_000);
    expect(b.BTC.available).toBe(500_000);
    const su = ok(await a.post('/withdrawal-signature', { user: w.address, asset: 'USDC', amount: '2.5', nonce: u.nonce }));
    expect(su).toMatchObject({ asset: USDC_TOKEN, amount_wei: '2500000' });
    expect(recoverAddress(personalHash(withdrawalDigest(w.address, USDC_TOKEN, 2_500_000n, u.nonce as number)), su.signature)).toBe(OPERATOR_ADDRESS);
    const sb = ok(await a.post('/withdrawal-signature', { user: w.address, asset: 'BTC', amount: '1.5', nonce: bt.nonce }));
    expect(sb).toMatchObject({ asset: BTC_TOKEN, amount_wei: '150000000' });
    expect(recoverAddress(personalHash(withdrawalDigest(w.address, BTC_TOKEN, 150_000_000n, bt.nonce as number)), sb.signature)).toBe(OPERATOR_ADDRESS);
  });

  it('a small wei amount may be a JSON integer', async () => {
    const w = await funded({ ETH: '1' });
    const nonce = w.nextNonce();
    const body = { address: w.address, asset: 'ETH', amount: 3_000_000_000_000, nonce, signature: w.sign(`ringbook:withdraw:${w.address}:ETH:3000000000000:${nonce}`) };
    expect(ok(await a.post('/withdrawals', body))).toMatchObject({ amount_units: 3, amount: '3000000000000' });
    expect((await balances(s, w.address)).ETH.available).toBe(999_997);
  });

  it('the address is signed exactly as sent (mixed case must be signed in mixed case)', async () => {
    const w = await funded({ USDC: '10' });
    const upper = '0x' + w.address.slice(2).toUpperCase();
    ok(await a.post('/withdrawals', w.withdraw('USDC', '1000000', { user: upper })));
    const nonce = w.nextNonce();
    const signed_lower = { address: upper, asset: 'USDC', amount: '1000000', nonce, signature: w.sign(`ringbook:withdraw:${w.address}:USDC:1000000:${nonce}`) };
    fail(await a.post('/withdrawals', signed_lower), 401, 'INVALID_SIGNATURE');
    expect((await balances(s, w.address)).USDC.available).toBe(9_000_000);
  });

  it('a wei amount that is not a multiple of 10^12 is INVALID_ORDER, and nothing changes', async () => {
    const w = await funded({ ETH: '1', BTC: '1' });
    const before = await snapshot(s, [w.address]);
    fail(await a.post('/withdrawals', w.withdraw('ETH', '500000000000000001')), 400, 'INVALID_ORDER', 'multiple of 1000000000000');
    fail(await a.post('/withdrawals', w.withdraw('ETH', '1')), 400, 'INVALID_ORDER', 'multiple of 1000000000000');
    fail(await a.post('/withdrawals', w.withdraw('ETH', '999999999999')), 400, 'INVALID_ORDER');
    fail(await a.post('/withdrawals', w.withdraw('BTC', '150')), 400, 'INVALID_ORDER', 'multiple of 100');
    expect(await snapshot(s, [w.address])).toEqual(before);
  });

  it('more than available is INSUFFICIENT_BALANCE (locked funds do not count); zero is INVALID_REQUEST', async () => {
    const w = await funded({ USDC: '10' });
    ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 1000 }))); // locks 1.0005
    const before = await snapshot(s, [w.address]);
    fail(await a.post('/withdrawals', w.withdraw('USDC', '10000000')), 400, 'INSUFFICIENT_BALANCE');
    fail(await a.post('/withdrawals', w.withdraw('USDC', '8999501')), 400, 'INSUFFICIENT_BALANCE');
    fail(await a.post('/withdrawals', w.withdraw('USDC', '0')), 400, 'INVALID_REQUEST', 'amount must be positive');
    fail(await a.post('/withdrawals', w.withdraw('USDC', '100000000000000000000')), 400, 'INVALID_REQUEST', 'too large');
    fail(await a.post('/withdrawals', w.withdraw('USDC', '01')), 400, 'INVALID_REQUEST', 'amount');
    expect(await snapshot(s, [w.address])).toEqual(before);
    ok(await a.post('/withdrawals', w.withdraw('USDC', '8999500')));
    expect((await balances(s, w.address)).USDC).toEqual({ available: 0, locked: 1_000_500 });
  });

  it('an address that never deposited cannot withdraw (INSUFFICIENT_BALANCE: every address is an account)', async () => {
    const fresh = Wallet.random();
    fail(await a.post('/withdrawals', fresh.withdraw('USDC', '1')), 400, 'INSUFFICIENT_BALANCE');
  });

  it('withdrawal-signature answers only a matching pending withdrawal', async () => {
    const w = await funded({ ETH: '1' });
    const other = await funded({ ETH: '1' });
    const body = w.withdraw('ETH', '1000000000000000'); // 0.001 ETH
    ok(await a.post('/withdrawals', body));
    const n = body.nonce as number;
    ok(await a.post('/withdrawal-signature', { user: w.address, asset: 'ETH', amount: '0.001', nonce: n }));
    fail(await a.post('/withdrawal-signature', { user: w.address, asset: 'ETH', amount: '0.002', nonce: n }), 404, 'NOT_FOUND');
    fail(await a.post('/withdrawal-signature', { user: w.address, asset: 'USDC', amount: '0.001', nonce: n }), 404, 'NOT_FOUND');
    fail(await a.post('/withdrawal-signature', { user: w.address, asset: 'ETH', amount: '0.001', nonce: n + 1 }), 404, 'NOT_FOUND');
    fail(await a.post('/withdrawal-signature', { user: other.address, asset: 'ETH', amount: '0.001', nonce: n }), 404, 'NOT_FOUND');
    // The amount is a decimal of whole units here, not wei.
    fail(await a.post('/withdrawal-signature', { user: w.address, asset: 'ETH', amount: '1000000', nonce: n }), 404, 'NOT_FOUND');
    fail(await a.post('/withdrawal-signature', { user: w.address, asset: 'ETH', amount: 0.001, nonce: n }), 400, 'INVALID_REQUEST', 'amount');
    fail(await a.post('/withdrawal-signature', { user: w.address, asset: 'ETH', amount: '0.001', nonce: '1' }), 400, 'INVALID_REQUEST', 'nonce');
    fail(await a.post('/withdrawal-signature', { user: 'me', asset: 'ETH', amount: '0.001', nonce: n }), 400, 'INVALID_REQUEST', 'user');
    fail(await a.post('/withdrawal-signature', { user: w.address, asset: 'XYZ', amount: '0.001', nonce: n }), 400, 'INVALID_REQUEST', 'asset');
  });

  it('conservation: deposits - withdrawals = what users hold + the fee account', async () => {
    const maker = await funded({ ETH: '1', USDC: '50' });
    const taker = await funded({ USDC: '50' });
    ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 3_000_000_000, quantity: 1000 })));
    ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 3_000_000_000, quantity: 1000 })));
    ok(await a.post('/withdrawals', taker.withdraw('USDC', '10000000')));
    ok(await a.post('/withdrawals', maker.withdraw('ETH', '100000000000000000')));
    const mb = await balances(s, maker.address);
    const tb = await balances(s, taker.address);
    // notional 3 USDC, taker fee 1500, rebate 300: fee account 1200.
    expect(100_000_000 - 10_000_000 - (mb.USDC.available + mb.USDC.locked + tb.USDC.available + tb.USDC.locked)).toBe(1200);
    expect(1_000_000 - 100_000 - (mb.ETH.available + mb.ETH.locked + tb.ETH.available + tb.ETH.locked)).toBe(0);
    expect(bytesToHex(new Uint8Array([1]))).toBe('01');
  });
});
