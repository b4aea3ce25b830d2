// What every page of the web view shares: the HTTP client, the one WebSocket (the SDK's
// RingbookSocket: book_delta sync with checksums, reconnects), and the development key.
//
// The development key is a private key kept in this browser's localStorage, unencrypted: anyone
// with access to the browser profile has it. It exists to try the exchange locally (docs/web.md),
// never for real funds.
import {
  formatUnits, RingbookClient, RingbookSocket, Wallet, type Market, type WebSocketConstructor,
} from '../../src/client/index.js';

export const DEV_KEY_STORAGE = 'ringbook.dev_key';

export interface Session {
  /** Public reads. */
  readonly client: RingbookClient;
  /** Signed requests with the development key. */
  readonly trader: RingbookClient;
  readonly wallet: Wallet;
  readonly socket: RingbookSocket;
  markets: Market[];
}

function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return '0x' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The stored development key, or a new one (stored) when there is none or it is not a valid key. */
export function loadDevWallet(): Wallet {
  const stored = localStorage.getItem(DEV_KEY_STORAGE);
  if (stored !== null) {
    try {
      return new Wallet(stored);
    } catch {
      // not a valid key: replaced below
    }
  }
  return newDevWallet();
}

/** A fresh random development key, stored (a value outside [1, n) is drawn again: odds 2^-128). */
export function newDevWallet(key?: string): Wallet {
  for (let i = 0; i < 4; i++) {
    const k = key ?? randomKey();
    try {
      const w = new Wallet(k);
      localStorage.setItem(DEV_KEY_STORAGE, k);
      return w;
    } catch (e) {
      if (key !== undefined) throw e;
    }
  }
  throw new Error('could not draw a valid key');
}

/** The private channels of an address: its order updates, fills and balance changes. */
export function privateChannels(address: string): string[] {
  return [`orders:${address}`, `fills:${address}`, `balances:${address}`];
}

/**
 * The session: the socket authenticates with the development key (challenge flow, on every
 * reconnect) and holds its private channels, so the pages follow the key's orders, fills and
 * balances without polling (GETs are limited to rate_limits.gets_per_ip a minute per IP, 100 by
 * default, shared with every other client on the machine).
 */
export async function openSession(): Promise<Session> {
  const base_url = location.origin;
  const wallet = loadDevWallet();
  const client = new RingbookClient({ base_url, fetch: fetch.bind(globalThis) });
  const socket = new RingbookSocket({
    url: base_url, wallet, channels: privateChannels(wallet.address),
    WebSocket: WebSocket as unknown as WebSocketConstructor, fetch: fetch.bind(globalThis),
  });
  const s: Session = {
    client,
    trader: new RingbookClient({ base_url, wallet, fetch: fetch.bind(globalThis) }),
    wallet,
    socket,
    markets: await client.markets(),
  };
  await socket.connect();
  return s;
}

/** Stores another development key (a new random one when none is given) and reloads the page with it. */
export function useKey(key?: string): void {
  newDevWallet(key);
  location.reload();
}

/** A fixed-point amount (integer units, 1,000,000 per whole) as a decimal text. */
export function fmt(units: string | number): string {
  return formatUnits(typeof units === 'number' ? units : Number(units));
}

/** A price or quantity in units as a float, for charts only (never for amounts that are kept or sent). */
export function chartValue(units: string | number): number {
  return Number(units) / 1_000_000;
}

export function shortAddress(a: string): string {
  return `${a.slice(0, 6)}…${a.slice(-4)}`;
}

export function timeOf(iso: string): string {
  return iso.slice(11, 19);
}

/**
 * Subscribes the channels not held yet. Channels stay held while the page is open (a market
 * visited again has its book at once); the server allows 100 per connection
 * (limits.ws_subscriptions_per_connection_max), the markets page asks for at most
 * MARKETS_LIVE_MAX books.
 */
export async function hold(s: Session, channels: string[]): Promise<void> {
  const held = new Set(s.socket.channels);
  const missing = channels.filter((c) => !held.has(c));
  if (missing.length > 0) await s.socket.subscribe(missing);
}

/** Markets whose best bid/ask the markets page keeps live over the socket; the others refresh over HTTP. */
export const MARKETS_LIVE_MAX = 40;
