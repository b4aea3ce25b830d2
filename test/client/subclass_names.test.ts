// A user's subclass of RingbookClient may give its own members any name the SDK does not document:
// the SDK's internals (rest_core.ts withNonce, signerOf, accountAddress, hasAdminToken) are module
// functions, not members. Until 2026-11-27 they were protected members, so this file did not
// compile (`npx tsc -p tsconfig.json` compiles test/: a field where the base has a method, and no
// `override`), and at run time the subclass's members replaced the SDK's: its orders, reads and
// deposits broke. Fake fetch, no server.
import { describe, expect, it } from 'vitest';
import { eip191Hash } from '../../src/auth/eip191.js';
import { recoverAddress } from '../../src/auth/recover.js';
import { parseSignatureHex } from '../../src/auth/signature_rules.js';
import { MonotonicNonce, orderJsonMessage, RingbookClient, type RingbookClientOptions } from '../../src/client/index.js';
import { err, fakeFetch, ok, randomWallet } from './helpers.js';

/** A trading desk's client: its own meanings of the four names. */
class DeskClient extends RingbookClient {
  /** Who runs this desk (a label, not a wallet). */
  readonly signer: string;
  /** The desk's settlement account elsewhere (not the exchange address). */
  readonly accountAddress = 'desk-settlement-17';
  /** The desk's own flag: whether its operator may see admin views (not the SDK's X-Admin-Token). */
  has_admin_token = false;
  readonly nonce_labels: string[] = [];

  constructor(opts: RingbookClientOptions, signer: string) {
    super(opts);
    this.signer = signer;
  }

  /** The desk's own nonce labelling, another signature than the SDK's former withNonce. */
  withNonce(label: string): string {
    this.nonce_labels.push(label);
    return `${this.signer}:${label}`;
  }
}

const ORDER = { market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 10_000 } as const;

describe('a RingbookClient subclass with members named signer, withNonce, accountAddress, has_admin_token', () => {
  it('keeps its own members, and the SDK signs, retries nonces, reads the wallet\'s account and sends the admin token as before', async () => {
    const w = randomWallet();
    const { fetch, sent } = fakeFetch([
      err(400, 'DUPLICATE_NONCE'), // the first order: retried with a fresh nonce
      (s) => ({ status: 200, body: { ok: true, data: { order_id: '1', status: 'open', nonce: s.body.nonce } } }),
      ok({}),
    ]);
    const c = new DeskClient({ base_url: 'http://x', wallet: w, admin_token: 'tok', fetch, nonces: new MonotonicNonce({ scale: 0 }) }, 'alice');

    // The subclass's members are its own.
    expect(c.signer).toBe('alice');
    expect(c.accountAddress).toBe('desk-settlement-17');
    expect(c.has_admin_token).toBe(false);
    expect(c.withNonce('morning')).toBe('alice:morning');

    // A signed order: the wallet signs it, and DUPLICATE_NONCE is retried with the next nonce.
    const r = await c.placeOrder({ ...ORDER });
    expect(r).toMatchObject({ order_id: '1', nonce: 2 });
    expect(sent.map((s) => [s.method, s.url, s.body.nonce])).toEqual([['POST', 'http://x/orders', 1], ['POST', 'http://x/orders', 2]]);
    const body = sent[1].body;
    expect(body.user).toBe(w.address);
    const text = orderJsonMessage({ ...ORDER, order_type: 'limit', time_in_force: 'gtc', nonce: 2, stp: undefined, expires_after_ms: undefined });
    expect(recoverAddress(eip191Hash(text), parseSignatureHex(body.signature) as NonNullable<ReturnType<typeof parseSignatureHex>>)).toBe(w.address);
    expect(c.nonce_labels).toEqual(['morning']); // the SDK did not call the subclass's withNonce

    // A read of the wallet's own account, and an operator deposit with the client's X-Admin-Token.
    await c.balances();
    expect(sent[2].url).toBe(`http://x/account/${w.address}/balances`);
    await c.deposit({ user: w.address, asset: 'USDC', amount: '5' });
    expect(sent[3]).toMatchObject({ method: 'POST', url: 'http://x/deposit', headers: { 'X-Admin-Token': 'tok' } });
  });

  it('without a wallet or an admin token the SDK still says so (its checks, not the subclass\'s fields)', async () => {
    const { fetch, sent } = fakeFetch([ok({})]);
    const c = new DeskClient({ base_url: 'http://x', fetch }, 'bob');
    await expect(c.placeOrder({ ...ORDER })).rejects.toThrow(/needs a wallet/);
    await expect(c.balances()).rejects.toThrow(/pass an address/);
    c.has_admin_token = true; // the desk's flag: the SDK sends no token it was not given
    await expect(c.deposit({ user: randomWallet().address, asset: 'USDC', amount: '5' })).resolves.toEqual({});
    expect(sent).toHaveLength(1);
    expect(sent[0].headers['X-Admin-Token']).toBeUndefined();
  });
});
