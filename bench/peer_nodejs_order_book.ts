// The peer for the matcher benchmark: `nodejs-order-book` (fasenderos/nodejs-order-book), the
// popular JS limit order book, driven with the same flow as the engines.
//
// Mapping, one OrderBook per market:
//   PLACE limit gtc/ioc/fok -> ob.limit({ side, id, size, price, timeInForce })  (same ids, prices, sizes)
//   PLACE market ioc        -> ob.market({ side, size })
//   PLACE market fok        -> ob.market({ side, size })  (the library has no FOK market order)
//   CANCEL                  -> ob.cancel(id)
//   AMEND                   -> ob.modify(id, { price, size })  (the library always re-queues)
//   DEPOSIT                 -> nothing (the library has no accounts)
// What it does not do, which the engines do on every request: balances, locks, fees and rebates,
// nonces, validation against limits, and per-request event emission (orderUpdate/balance). Its
// book can drift from the engines' (e.g. a same-price size reduction loses priority there), so a
// few cancels/amends miss; those are counted, not hidden.
import { OrderBook, Side as PeerSide, type IProcessOrder, type LimitOrderOptions } from 'nodejs-order-book';
import { OrderType, RequestKind, Side, Tif } from '../src/engine/types.js';
import type { Flow } from './flow.js';

type PeerTif = NonNullable<LimitOrderOptions['timeInForce']>;
const TIF_GTC = 'GTC' as PeerTif;
const TIF_IOC = 'IOC' as PeerTif;
const TIF_FOK = 'FOK' as PeerTif;

export const PEER_NAME = 'nodejs-order-book';

export class PeerCounts {
  requests = 0;
  errors = 0;
  cancel_misses = 0;
  /** Orders reported done (fully filled or finished) by the library's responses. */
  done = 0;

  reset(): void {
    this.requests = 0;
    this.errors = 0;
    this.cancel_misses = 0;
    this.done = 0;
  }
}

export class PeerBooks {
  readonly books: OrderBook[] = [];

  /**
   * @param markets number of markets
   * @param id_strings id -> string, built before timing (the library's ids are strings; turning
   *                   numbers into strings is setup, not matching)
   */
  constructor(markets: number, private readonly id_strings: string[]) {
    for (let m = 0; m < markets; m++) this.books.push(new OrderBook());
  }

  /** Applies flow rows [from, to). */
  replay(f: Flow, from: number, to: number, c: PeerCounts): void {
    const ids = this.id_strings;
    const books = this.books;
    for (let i = from; i < to; i++) {
      const kind = f.kind[i];
      if (kind === RequestKind.DEPOSIT) continue;
      c.requests++;
      const ob = books[f.market[i]];
      let res: IProcessOrder | undefined;
      if (kind === RequestKind.PLACE) {
        const side = f.side[i] === Side.BID ? PeerSide.BUY : PeerSide.SELL;
        if (f.order_type[i] === OrderType.LIMIT) {
          const tif = f.tif[i];
          res = ob.limit({
            side,
            id: ids[f.new_order_id[i]],
            size: f.quantity[i],
            price: f.price[i],
            timeInForce: tif === Tif.IOC ? TIF_IOC : tif === Tif.FOK ? TIF_FOK : TIF_GTC,
          });
        } else {
          res = ob.market({ side, size: f.quantity[i] });
        }
      } else if (kind === RequestKind.CANCEL) {
        if (ob.cancel(ids[f.order_id[i]]) === undefined) c.cancel_misses++;
        continue;
      } else if (kind === RequestKind.AMEND) {
        res = ob.modify(ids[f.order_id[i]], { price: f.price[i], size: f.quantity[i] });
      } else {
        continue;
      }
      if (res.err !== null && res.err !== undefined) c.errors++;
      c.done += res.done.length;
    }
  }
}

/** id -> decimal string for ids in [0, max_id]. */
export function idStrings(max_id: number): string[] {
  const a = new Array<string>(max_id + 1);
  for (let i = 0; i <= max_id; i++) a[i] = String(i);
  return a;
}
