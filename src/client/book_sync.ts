// Order books kept in sync over the WebSocket (docs/api.md "book", "book_delta"): by `sequence`
// (stale snapshots dropped; on a gap the book is re-fetched over HTTP and the newer of the two
// kept) or by `book_delta` (applied on the book held when `prev_sequence` chains, checked against
// the checksum, the server's own function so the two cannot differ; a gap or a mismatch
// re-fetches the book). RingbookSocket (ws.ts) hands each book message to its BookSync.
import { bookChecksum } from '../util/book_checksum.js';
import type { BookLevel, OrderBook } from './types.js';
import type { BookDeltaMessage, BookSnapshotMessage, BookView } from './ws_messages.js';

/** `side` with `changes` applied, best first (bids descending, asks ascending by price). */
export function applyLevels(side: readonly BookLevel[], changes: readonly BookLevel[], bids: boolean): BookLevel[] {
  if (changes.length === 0) return side.slice();
  const m = new Map<string, string>();
  for (const [p, q] of side) m.set(p, q);
  for (const [p, q] of changes) {
    if (q === '0') m.delete(p);
    else m.set(p, q);
  }
  // Prices are fixed-point integer strings: compare as integers (BigInt: exact beyond 2^53 too).
  const out: BookLevel[] = [...m.entries()];
  out.sort((a, b) => {
    const x = BigInt(a[0]);
    const y = BigInt(b[0]);
    return x === y ? 0 : (x > y) === bids ? -1 : 1;
  });
  return out;
}

/** True when the book's best 25 levels per side give `checksum`. */
export function checksumMatches(bids: readonly BookLevel[], asks: readonly BookLevel[], checksum: number): boolean {
  return bookChecksum(bids, asks) === checksum;
}

/** The market of a `book:` or `book_delta:` channel (uppercased), else null. */
function bookMarketOf(channel: string): string | null {
  if (channel.startsWith('book:')) return channel.slice(5).toUpperCase();
  if (channel.startsWith('book_delta:')) return channel.slice(11).toUpperCase();
  return null;
}

/** BookSync's counters (RingbookSocket.stats holds them with its own). */
export interface BookSyncStats {
  resyncs: number;
  stale_dropped: number;
  gaps: number;
  deltas_applied: number;
  checksum_mismatches: number;
}

export interface BookSyncOptions {
  /** Counted in place. */
  stats: BookSyncStats;
  /** The book over HTTP (`GET /orderbook/:market`). */
  fetchBook: (market_id: string) => Promise<OrderBook>;
  /** Every book applied. */
  onBook: (view: BookView) => void;
  onError: (e: Error) => void;
  /** Test hook: return true to drop an incoming book snapshot as if it had been lost. */
  dropSnapshot?: (msg: BookSnapshotMessage) => boolean;
  /** Test hook: return true to drop an incoming book delta as if it had been lost. */
  dropDelta?: (msg: BookDeltaMessage) => boolean;
}

/** The synchronized books of one socket. */
export class BookSync {
  readonly #opts: BookSyncOptions;
  #books = new Map<string, BookView>();
  /** Markets whose next snapshot is the first of a new connection (authoritative). */
  #fresh = new Set<string>();
  /** Deltas that arrived while their market's book was being re-fetched, replayed after it. */
  #held_deltas = new Map<string, BookDeltaMessage[]>();

  constructor(opts: BookSyncOptions) {
    this.#opts = opts;
  }

  book(market_id: string): BookView | undefined {
    return this.#books.get(market_id);
  }

  /** `channel` is (re)subscribed: when a book channel, its next snapshot is authoritative. */
  markFresh(channel: string): void {
    const market = bookMarketOf(channel);
    if (market !== null) this.#fresh.add(market);
  }

  snapshot(msg: BookSnapshotMessage): void {
    if (this.#opts.dropSnapshot?.(msg)) return;
    const stats = this.#opts.stats;
    const market = msg.market_id;
    const cur = this.#books.get(market);
    const fresh = this.#fresh.delete(market);
    if (cur && msg.sequence <= cur.sequence && !(fresh && msg.sequence < cur.sequence)) {
      // Stale or repeated. (The first snapshot of a new connection below the last applied one
      // means the server's counter restarted: it is taken as authoritative.)
      stats.stale_dropped++;
      return;
    }
    const gap = cur !== undefined && msg.sequence > cur.sequence + 1;
    this.#apply({ market_id: market, sequence: msg.sequence, bids: msg.bids, asks: msg.asks, source: 'ws', timestamp: msg.timestamp });
    if (msg.checksum !== undefined && !checksumMatches(msg.bids, msg.asks, msg.checksum)) {
      stats.checksum_mismatches++;
      void this.resync(market);
    } else if (gap) {
      stats.gaps++;
      void this.resync(market);
    }
  }

  /**
   * A `book_delta`: applied when its prev_sequence is the book held, then checked against its
   * checksum; a stale one (not newer than the book) is dropped; anything else is a gap. A gap or
   * a mismatch re-fetches the book over HTTP; deltas arriving meanwhile are held and replayed on
   * the fetched book.
   */
  delta(msg: BookDeltaMessage): void {
    if (this.#opts.dropDelta?.(msg)) return;
    const market = msg.market_id;
    const held = this.#held_deltas.get(market);
    if (held !== undefined) {
      held.push(msg);
      return;
    }
    const cur = this.#books.get(market);
    if (cur !== undefined && msg.sequence <= cur.sequence) {
      this.#opts.stats.stale_dropped++;
      return;
    }
    if (cur === undefined || msg.prev_sequence !== cur.sequence) {
      this.#opts.stats.gaps++;
      void this.#refetch(market, msg);
      return;
    }
    if (!this.#applyDelta(cur, msg)) void this.#refetch(market, null);
  }

  /** Applies `msg` on `cur`; false (nothing applied) when the result fails the checksum. */
  #applyDelta(cur: BookView, msg: BookDeltaMessage): boolean {
    const bids = applyLevels(cur.bids, msg.bids, true);
    const asks = applyLevels(cur.asks, msg.asks, false);
    if (!checksumMatches(bids, asks, msg.checksum)) {
      this.#opts.stats.checksum_mismatches++;
      return false;
    }
    this.#opts.stats.deltas_applied++;
    this.#apply({ market_id: msg.market_id, sequence: msg.sequence, bids, asks, source: 'ws', timestamp: msg.timestamp });
    return true;
  }

  /** Re-fetches the book, holding the deltas that arrive meanwhile (`first` included), then replays them. */
  async #refetch(market: string, first: BookDeltaMessage | null): Promise<void> {
    if (this.#held_deltas.has(market)) {
      if (first) this.#held_deltas.get(market)!.push(first);
      return;
    }
    const held: BookDeltaMessage[] = first ? [first] : [];
    this.#held_deltas.set(market, held);
    try {
      const b = await this.#opts.fetchBook(market);
      this.#opts.stats.resyncs++;
      this.#apply({ market_id: market, sequence: b.sequence, bids: b.bids, asks: b.asks, source: 'http', timestamp: null });
    } catch (e) {
      this.#opts.onError(e as Error);
    }
    this.#held_deltas.delete(market);
    for (const d of held) this.delta(d);
  }

  #apply(view: BookView): void {
    this.#books.set(view.market_id, view);
    this.#opts.onBook(view);
  }

  /** Re-fetches a book over HTTP and keeps it when newer than the one applied. */
  async resync(market_id: string): Promise<BookView | undefined> {
    try {
      const b = await this.#opts.fetchBook(market_id);
      this.#opts.stats.resyncs++;
      const cur = this.#books.get(market_id);
      if (!cur || b.sequence > cur.sequence) {
        this.#apply({ market_id, sequence: b.sequence, bids: b.bids, asks: b.asks, source: 'http', timestamp: null });
      }
    } catch (e) {
      this.#opts.onError(e as Error);
    }
    return this.#books.get(market_id);
  }
}
