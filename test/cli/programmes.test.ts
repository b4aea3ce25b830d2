// `ringbook referral` and `ringbook force-include` (src/cli/programmes.ts) in process, with the
// global fetch stubbed: usage errors (64), the requests they sign, --json output, exit codes. No
// server is started; the end-to-end run against a real server belongs with test/cli/trader.test.ts.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BOOLEAN_FLAGS, parseArgs } from '../../src/cli/common.js';
import { forceIncludeCommand, referralCommand } from '../../src/cli/programmes.js';
import { decodeForcedPayload, referralBody, Wallet } from '../../src/client/index.js';

const KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const ME = new Wallet(KEY).address;
const REFERRER = '0x1111111111111111111111111111111111111111';
const U = ['--url', 'http://stub:1', '--key', KEY];

interface Call {
  method: string;
  url: string;
  body: any;
}
let calls: Call[];
let answers: ((c: Call) => { status: number; body: unknown })[];
let out: string[];
let errs: string[];

beforeEach(() => {
  calls = [];
  answers = [];
  out = [];
  errs = [];
  vi.stubGlobal('fetch', async (url: string, init?: { method?: string; body?: string }) => {
    const c: Call = { method: init?.method ?? 'GET', url, body: init?.body === undefined ? undefined : JSON.parse(init.body) };
    calls.push(c);
    const a = (answers[calls.length - 1] ?? answers[answers.length - 1])(c);
    return { status: a.status, headers: { get: () => 'abcdefabcdef-1' }, text: async () => JSON.stringify(a.body) };
  });
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void errs.push(a.join(' ')));
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

const args = (argv: string[]) => parseArgs(argv, BOOLEAN_FLAGS);
const ok = (data: unknown) => () => ({ status: 200, body: { ok: true, data } });

const STATUS = {
  entry_id: 3, user: ME, kind: 'order', nonce: 10, payload_nonce: 11, queued_at: '2026-11-22T10:00:00.000Z',
  deadline: '2026-11-23T10:00:00.000Z', status: 'included', included_at: '2026-11-22T10:00:00.050Z', included_batch_id: 12,
  result: { accepted: false, error: 'INSUFFICIENT_BALANCE', message: 'insufficient balance', order_id: null },
};

describe('ringbook referral', () => {
  it('--help, and usage errors exit 64 without a request', async () => {
    expect(await referralCommand(args(['referral', '--help']))).toBe(0);
    expect(out.join('\n')).toContain('usage: ringbook referral register');
    expect(await referralCommand(args(['referral', ...U]))).toBe(64);
    expect(await referralCommand(args(['referral', 'register', ...U]))).toBe(64);
    expect(await referralCommand(args(['referral', 'register', ...U, '--referrer', '0x12']))).toBe(64);
    expect(await referralCommand(args(['referral', 'show', '--url', 'http://stub:1', '0xnope']))).toBe(64);
    expect(calls).toHaveLength(0);
  });

  it('register signs as the referred user; show prints the stats; a rejection exits 1', async () => {
    answers = [ok({ referred: ME, referrer: REFERRER, active_until: '2027-02-20T10:00:00.000Z', batch_id: '4' })];
    expect(await referralCommand(args(['referral', 'register', ...U, '--referrer', REFERRER, '--nonce', '77', '--json']))).toBe(0);
    expect(calls[0].url).toBe('http://stub:1/referral/register');
    expect(calls[0].body).toEqual(referralBody(new Wallet(KEY), REFERRER, 77));
    expect(JSON.parse(out[0]).batch_id).toBe('4');

    answers = [ok({
      address: REFERRER, referral_code: REFERRER, referred_users: 1, total_earnings_usdc: '400000', active_until: '2027-02-20T10:00:00.000Z',
      active_referrals: [{ address: ME, active_until: '2027-02-20T10:00:00.000Z', earned_usdc: '400000' }],
      referrals: [{ address: ME, active_until: '2027-02-20T10:00:00.000Z', active: true, earned_usdc: '400000' }], referred_by: null,
    })];
    calls = [];
    out = [];
    expect(await referralCommand(args(['referral', 'show', REFERRER, '--url', 'http://stub:1']))).toBe(0);
    expect(calls[0].url).toBe(`http://stub:1/referral/${REFERRER}`);
    expect(out.join('\n')).toContain('total earnings   0.4 USDC');

    answers = [() => ({ status: 400, body: { ok: false, error: 'REFERRAL_EXISTS', message: 'the referred user already has a referrer', request_id: 'abcdefabcdef-2' } })];
    expect(await referralCommand(args(['referral', 'register', ...U, '--referrer', REFERRER]))).toBe(1);
    expect(errs.join('\n')).toContain('REFERRAL_EXISTS');
  });
});

describe('ringbook force-include', () => {
  it('usage errors exit 64 without a request', async () => {
    expect(await forceIncludeCommand(args(['force-include', '--help']))).toBe(0);
    expect(out.join('\n')).toContain('usage: ringbook force-include <kind>');
    for (const argv of [
      ['force-include', ...U],
      ['force-include', 'bogus', ...U],
      ['force-include', 'order', ...U, '--market', 'ETH-USDC', '--side', 'bid', '--quantity', '1'],
      ['force-include', 'cancel', ...U],
      ['force-include', 'withdrawal', ...U, '--asset', 'ETH', '--amount', '0.5'],
      ['force-include', 'status', '--url', 'http://stub:1'],
    ]) expect(await forceIncludeCommand(args(argv)), argv.join(' ')).toBe(64);
    expect(calls).toHaveLength(0);
  });

  it('queues an order: envelope --nonce, payload --payload-nonce (any order) with its kind; --no-kind leaves it out; payload wraps a signed body', async () => {
    answers = [(c) => ok({ entry_id: 3, user: ME, kind: 'order', payload_hash: '0x' + '0'.repeat(64), nonce: c.body.nonce, payload_nonce: c.body.nonce + 1,
      queued_at: STATUS.queued_at, deadline: STATUS.deadline, status: 'pending', batch_id: '11' })()];
    const argv = ['force-include', 'order', ...U, '--market', 'ETH-USDC', '--side', 'bid', '--price', '2000.01', '--quantity', '0.0003', '--nonce', '10', '--payload-nonce', '9'];
    expect(await forceIncludeCommand(args(argv))).toBe(0);
    expect(calls[0].url).toBe('http://stub:1/force-include');
    expect(calls[0].body).toMatchObject({ user: ME, nonce: 10 });
    expect(decodeForcedPayload(calls[0].body.payload)).toMatchObject({ kind: 'order', user: ME, price: 2000010000, quantity: 300, nonce: 9 });
    expect(out.join('\n')).toContain('queued forced-inclusion entry 3 (order)');
    expect(await forceIncludeCommand(args(['force-include', 'cancel-all', ...U, '--no-kind', '--nonce', '20']))).toBe(0);
    expect(decodeForcedPayload(calls[1].body.payload)).not.toHaveProperty('kind');
    // A request signed earlier, wrapped as is.
    const signed = '0x' + Buffer.from(JSON.stringify({ user: ME, market_id: '*', nonce: 5, signature: '0x00' })).toString('hex');
    expect(await forceIncludeCommand(args(['force-include', 'payload', signed, ...U, '--nonce', '30']))).toBe(0);
    expect(calls[2].body).toMatchObject({ user: ME, nonce: 30, payload: signed });
    expect(await forceIncludeCommand(args(['force-include', 'payload', 'nothex', ...U]))).toBe(64);
  });

  it('--wait polls until included and exits 1 when the forced request was refused; status reads', async () => {
    answers = [ok({ ...STATUS, status: 'pending', payload_hash: '0x' + '0'.repeat(64), batch_id: '11' }), ok({ ...STATUS, status: 'pending', result: null }), ok(STATUS)];
    const code = await forceIncludeCommand(args(['force-include', 'withdrawal', ...U, '--asset', 'USDC', '--amount', '5000000', '--wait', '--json']));
    expect(code).toBe(1);
    expect(calls.map((c) => c.method)).toEqual(['POST', 'GET', 'GET']);
    expect(calls[1].url).toBe('http://stub:1/force-include/3');
    expect(JSON.parse(out[out.length - 1]).status.result.error).toBe('INSUFFICIENT_BALANCE');
    expect(errs.join('\n')).toContain('forced request refused: INSUFFICIENT_BALANCE');

    answers = [ok(STATUS)];
    out = [];
    expect(await forceIncludeCommand(args(['force-include', 'status', '3', '--url', 'http://stub:1']))).toBe(0);
    expect(out.join('\n')).toContain('result     refused: INSUFFICIENT_BALANCE');
  }, 10_000);
});
