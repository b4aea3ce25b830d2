// The WebSocket API's messages and channel names as the client sees them (docs/api.md
// "WebSocket"), the socket interface it needs, and the synchronized book view. RingbookSocket
// (ws.ts) speaks them; BookSync (book_sync.ts) keeps the books.
import type { BookLevel, OrderStatus, Side } from './types.js';

/** The subset of the browser WebSocket API the socket uses (the `ws` package implements it too). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: any) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null;
  onerror: ((ev: any) => void) | null;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface BookSnapshotMessage {
  type: 'book_snapshot';
  market_id: string;
  sequence: number;
  bids: BookLevel[];
  asks: BookLevel[];
  /** CRC-32 of the best 25 levels per side (docs/api.md); absent from older servers. */
  checksum?: number;
  timestamp: string;
}
export interface BookDeltaMessage {
  type: 'book_delta';
  market_id: string;
  sequence: number;
  /** The sequence of the previous message on the channel: must be the book held. */
  prev_sequence: number;
  /** Changed levels, `[price, quantity]`; quantity `"0"` removes the level. */
  bids: BookLevel[];
  asks: BookLevel[];
  checksum: number;
  timestamp: string;
}

/** The answer to a `post`: the HTTP status and exactly the HTTP body. */
export interface PostResponse {
  status: number;
  body: { ok: boolean; data?: unknown; error?: string | null; message?: string; request_id?: string };
}
export interface TradeMessage {
  type: 'trade';
  market_id: string;
  trade_id: string;
  price: string;
  quantity: string;
  side: Side;
  timestamp: string;
}
export interface FillMessage {
  type: 'fill';
  fill_id: string;
  order_id: string;
  market_id: string;
  side: Side;
  price: string;
  quantity: string;
  filled_quantity_cumulative: string;
  is_maker: boolean;
  fee: string;
  rebate: string;
  batch_id: string;
  timestamp: string;
}
export interface OrderUpdateMessage {
  type: 'order_update';
  order_id: string;
  client_order_id: string;
  market_id: string;
  side: Side;
  status: OrderStatus;
  price: string;
  quantity: string;
  filled_quantity: string;
  remaining_quantity: string;
  last_fill_price: string;
  reason: string;
  timestamp: string;
}
export interface BalanceUpdateMessage {
  type: 'balance_update';
  asset: string;
  total: string;
  available: string;
  reserved: string;
  reason: string;
  timestamp: string;
}

/** A synchronized book: the last applied whole snapshot of one market. */
export interface BookView {
  market_id: string;
  sequence: number;
  bids: BookLevel[];
  asks: BookLevel[];
  /** Where it came from: a WebSocket snapshot or an HTTP re-fetch after a gap. */
  source: 'ws' | 'http';
  timestamp: string | null;
}

export type SocketState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/** Channel names. */
export const channels = {
  book: (market_id: string) => `book:${market_id}`,
  bookDelta: (market_id: string) => `book_delta:${market_id}`,
  trades: (market_id: string) => `trades:${market_id}`,
  fills: (address: string) => `fills:${address.toLowerCase()}`,
  orders: (address: string) => `orders:${address.toLowerCase()}`,
  balances: (address: string) => `balances:${address.toLowerCase()}`,
};
