// The load generator's order flow: deterministic wallet keys, each wallet's request sequence
// (limit orders around a mid price, some crossing, cancels of its own resting orders by
// client_order_id), and the signed HTTP/1.1 request bytes of each request.
//
// Everything here runs before timing (in the signer workers): the timed phases only write the
// bytes built here. The messages are built with the server's own builders (src/auth/messages.ts)
// so the signed text is exactly what the gateway reconstructs; orders are signed in the compact
// JSON form, the first form the gateway tries, so every signature verifies on the first try.
import { createHash } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { eip191Hash } from '../../src/auth/eip191.js';
import { cancelMessage, orderJsonMessage } from '../../src/auth/messages.js';
import { loadNativeSecp256k1 as loadAddon, type NativeSecp256k1 } from '../../src/auth/secp256k1_native.js';
import { Rng } from '../../src/util/prng.js';

export type { NativeSecp256k1 };

/** The libsecp256k1 addon itself (the server's loader, src/auth/secp256k1_native.ts); throws when it does not load. */
export function loadNativeSecp256k1(): NativeSecp256k1 {
  const m = loadAddon();
  if (m === null || typeof m.ecdsaSign !== 'function') throw new Error('native secp256k1 addon not available');
  return m;
}

export const MARKET_ID = 'ETH-USDC';
/** ETH-USDC in config/default.json: tick 0.01 USDC, lot 0.0001 ETH (units = real x 1e6). */
export const TICK_UNITS = 10_000;
export const LOT_UNITS = 100;
/** 2,000 USDC. */
export const MID_UNITS = 2_000_000_000;
/** Funding per wallet (decimal strings for POST /deposit). */
export const DEPOSIT_USDC = '100000';
export const DEPOSIT_ETH = '100';

export const KIND_ORDER = 0;
export const KIND_CANCEL = 1;
export const KIND_DEPOSIT = 2;

export interface FlowMix {
  /** Share of requests that cancel one of the wallet's resting orders (when it has one). */
  cancel_share: number;
  /** Share of orders that cross the mid (IOC takers against the resting book). */
  cross_share: number;
  /** Resting orders sit 1..rest_ticks_max ticks away from the mid. */
  rest_ticks_max: number;
  /** Crossing orders reach 1..cross_ticks_max ticks past the mid. */
  cross_ticks_max: number;
  /** Quantities are 1..lots_max lots. */
  lots_max: number;
}

export const DEFAULT_MIX: FlowMix = {
  cancel_share: 0.15,
  cross_share: 0.2,
  rest_ticks_max: 25,
  cross_ticks_max: 5,
  lots_max: 100,
};

export interface WalletKey {
  index: number;
  priv: Uint8Array;
  /** Lowercase 0x address. */
  address: string;
}

/** Deterministic wallet i of a run seeded with `seed` (sha256 of seed and index, re-hashed if out of range). */
export function walletKey(secp: NativeSecp256k1, seed: string, index: number): WalletKey {
  let priv: Uint8Array = createHash('sha256').update(`${seed}:${index}`).digest();
  while (!secp.privateKeyVerify(priv)) priv = createHash('sha256').update(priv).digest();
  const pub = secp.publicKeyCreate(priv, false);
  const address = '0x' + Buffer.from(keccak_256(pub.subarray(1, 65)).subarray(12, 32)).toString('hex');
  return { index, priv, address };
}

/** Resting orders a wallet remembers as cancel candidates (oldest dropped beyond this). */
const RESTING_KEPT_MAX = 64;

/** One wallet's request sequence: strictly increasing nonces, cancels only of its own orders. */
export class WalletFlow {
  readonly key: WalletKey;
  private readonly mix: FlowMix;
  private readonly rng: Rng;
  private nonce = 0;
  /** client_order_ids of this wallet's gtc orders placed away from the mid, oldest first. */
  private resting: string[] = [];

  constructor(key: WalletKey, mix: FlowMix) {
    this.key = key;
    this.mix = mix;
    this.rng = new Rng(key.index * 2654435761 + 12345);
  }

  /** The next request as {kind, message to sign, body without the signature}. */
  next(): { kind: number; message: string; path: string; bodyHead: string } {
    const nonce = ++this.nonce;
    const user = this.key.address;
    const rng = this.rng;
    if (this.resting.length > 0 && rng.float() < this.mix.cancel_share) {
      // Oldest first: the orders nearest the mid are the ones takers fill, so the oldest far ones
      // are most likely still resting; a filled one answers NOT_FOUND (counted as a reject).
      const coid = this.resting.shift() as string;
      return {
        kind: KIND_CANCEL,
        message: cancelMessage({ client_order_id: coid, nonce }),
        path: '/orders/cancel',
        bodyHead: `{"user":"${user}","client_order_id":"${coid}","nonce":${nonce}`,
      };
    }
    const bid = rng.float() < 0.5;
    const side = bid ? 'bid' : 'ask';
    const quantity = rng.int(1, this.mix.lots_max) * LOT_UNITS;
    let price: number;
    let tif: string;
    let coid = '';
    if (rng.float() < this.mix.cross_share) {
      const k = rng.int(1, this.mix.cross_ticks_max);
      price = bid ? MID_UNITS + k * TICK_UNITS : MID_UNITS - k * TICK_UNITS;
      tif = 'ioc';
    } else {
      const k = rng.int(1, this.mix.rest_ticks_max);
      price = bid ? MID_UNITS - k * TICK_UNITS : MID_UNITS + k * TICK_UNITS;
      tif = 'gtc';
      coid = `c${nonce}`;
      this.resting.push(coid);
      if (this.resting.length > RESTING_KEPT_MAX) this.resting.shift();
    }
    const fields = { market_id: MARKET_ID, side, price, quantity, order_type: 'limit', time_in_force: tif, nonce };
    return {
      kind: KIND_ORDER,
      message: orderJsonMessage(fields),
      path: '/orders',
      bodyHead:
        `{"user":"${user}","market_id":"${MARKET_ID}","side":"${side}","price":${price},"quantity":${quantity}` +
        `,"order_type":"limit","time_in_force":"${tif}","nonce":${nonce}` +
        (coid === '' ? '' : `,"client_order_id":"${coid}"`),
    };
  }
}

/** `0x` + r||s||v hex, v = 27 + recid (EIP-191 personal_sign style). */
export function signMessageHex(secp: NativeSecp256k1, priv: Uint8Array, message: string): string {
  const { signature, recid } = secp.ecdsaSign(eip191Hash(message), priv);
  return '0x' + Buffer.from(signature.buffer, signature.byteOffset, 64).toString('hex') + (27 + recid).toString(16);
}

/** The whole HTTP/1.1 request text (ASCII) for a JSON body. */
export function httpRequest(path: string, body: string, extraHeaders = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extraHeaders}Content-Length: ${body.length}\r\n\r\n${body}`;
}

/** Signs the wallet's next request and returns its HTTP bytes as text, with its kind. */
export function nextSignedRequest(secp: NativeSecp256k1, flow: WalletFlow): { kind: number; text: string } {
  const r = flow.next();
  const sig = signMessageHex(secp, flow.key.priv, r.message);
  return { kind: r.kind, text: httpRequest(r.path, `${r.bodyHead},"signature":"${sig}"}`) };
}

/** POST /deposit with the admin token. */
export function depositRequest(address: string, asset: string, amount: string, admin_token: string): string {
  return httpRequest('/deposit', `{"user":"${address}","asset":"${asset}","amount":"${amount}"}`, `X-Admin-Token: ${admin_token}\r\n`);
}

/** Wallets of lane `lane` when `wallets` wallets are spread over `lanes` lanes: w = lane + k * lanes. */
export function laneWallets(lane: number, lanes: number, wallets: number): number[] {
  const out: number[] = [];
  for (let w = lane; w < wallets; w += lanes) out.push(w);
  return out;
}
