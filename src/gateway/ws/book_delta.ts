// What `book_delta:<market>` subscribers hold, per market, so each committed batch that changed the
// book can be sent as the levels that changed (DECISIONS "Book deltas with a checksum", after
// Binance's diff depth stream and Kraken's book channel).
//
// Decisions:
// - The book of the channel is the one of `book_snapshot`: the best `ws_book_depth_max` levels per
//   side. A level that leaves that window (removed, or pushed out by better ones) is sent with
//   quantity 0, one that enters it with its quantity, so a client applying the deltas to the
//   subscribe snapshot holds exactly the window the snapshot would show.
// - The view exists only while the market has delta subscribers (it is built from the read model's
//   book when the first one subscribes, and dropped with the last one): a market nobody watches
//   costs nothing.
// - The diff is taken against the read model after the batch (a Map lookup per level of the
//   window), only for markets whose `book_sequence` moved in the batch.
// - `prev_sequence` is the sequence of the previous message the channel carried (the subscribe
//   snapshot, or the previous delta). Every batch that moved the book's sequence sends a delta,
//   even one whose change lies deeper than the window (its level lists are then empty): the
//   channel's sequences are then exactly the book's, and a subscribe snapshot (taken at the
//   current sequence) always joins the chain.
import { bookChecksum } from '../../util/book_checksum.js';

type Level = [number, number];

interface View {
  bids: Map<number, number>;
  asks: Map<number, number>;
  /** Sequence of the last message sent on the channel. */
  sequence: number;
}

/** The levels that changed, best first per side, and the book's checksum after them. */
export interface BookDelta {
  prev_sequence: number;
  bids: Level[];
  asks: Level[];
  checksum: number;
}

function mapOf(levels: readonly (readonly [number, number])[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const [p, q] of levels) m.set(p, q);
  return m;
}

/** Changed levels of one side: new or changed quantities, and removed prices with quantity 0. */
function diffSide(held: Map<number, number>, now: readonly (readonly [number, number])[], bid: boolean): Level[] {
  const out: Level[] = [];
  const seen = new Set<number>();
  for (const [p, q] of now) {
    seen.add(p);
    if (held.get(p) !== q) out.push([p, q]);
  }
  for (const p of held.keys()) if (!seen.has(p)) out.push([p, 0]);
  out.sort(bid ? (a, b) => b[0] - a[0] : (a, b) => a[0] - b[0]);
  return out;
}

export class BookDeltaViews {
  private readonly views: (View | null)[] = [];

  /** The book a new subscriber receives as its snapshot becomes the view (if none is held yet). */
  hold(m: number, sequence: number, bids: readonly (readonly [number, number])[], asks: readonly (readonly [number, number])[]): void {
    if (this.views[m] !== null && this.views[m] !== undefined) return;
    this.views[m] = { bids: mapOf(bids), asks: mapOf(asks), sequence };
  }

  /** The last subscriber left: the view is dropped. */
  release(m: number): void {
    this.views[m] = null;
  }

  /**
   * After a committed batch moved the sequence of market `m`: the delta from the held view to the
   * window now (null when nobody holds the market), and the view moves on.
   */
  advance(
    m: number, sequence: number, bids: readonly (readonly [number, number])[], asks: readonly (readonly [number, number])[],
  ): BookDelta | null {
    const v = this.views[m];
    if (v === null || v === undefined) return null;
    const db = diffSide(v.bids, bids, true);
    const da = diffSide(v.asks, asks, false);
    const prev_sequence = v.sequence;
    this.views[m] = { bids: mapOf(bids), asks: mapOf(asks), sequence };
    return { prev_sequence, bids: db, asks: da, checksum: bookChecksum(bids, asks) };
  }
}
