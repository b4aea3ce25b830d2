// The read model's client-id index: (account, client_order_id) -> the newest order using it, for
// GET /orders/by-client-id (read_model_state.ts orderByClientId), set at each placement with a
// client id and dropped when that order is forgotten.
//
// Keyed by a 32-bit hash of the pair, a small integer, not by the `account:client_order_id` string
// it used to be: the string cost a concatenation, its flattening and string hash per placement, and
// a second long-lived string per held order for the scavenger to copy (issue 11, docs/benchmarks.md
// h21m). The hash is not the key: every lookup checks the order it finds (its account and client
// id, kept in the order itself), and a pair whose hash another held pair already owns goes to an
// exact `account:client_order_id` map beside it (`overflow`; about one placement in 4 billion per
// held pair). A pair is never in both maps: setting it in the hash map takes it out of `overflow`.
// Snapshots still carry `account:client_order_id` keys (entries()).
export interface ClientIdOwner {
  account: number;
  client_order_id: string;
}

/** 32 bits of FNV-1a over the account's four bytes and the client id's chars, as a small integer. */
export function clientIdHash(account: number, client_order_id: string): number {
  let h = 0x811c9dc5 | 0;
  h = Math.imul(h ^ (account & 0xff), 0x01000193);
  h = Math.imul(h ^ ((account >>> 8) & 0xff), 0x01000193);
  h = Math.imul(h ^ ((account >>> 16) & 0xff), 0x01000193);
  h = Math.imul(h ^ (account >>> 24), 0x01000193);
  for (let i = 0; i < client_order_id.length; i++) h = Math.imul(h ^ client_order_id.charCodeAt(i), 0x01000193);
  return h;
}

export class ClientIdIndex {
  /** clientIdHash -> the order (whose account and client id say which pair owns the hash). */
  private readonly by_hash = new Map<number, number>();
  /** `account:client_order_id` -> order, for a pair whose hash another held pair owned when it was set. */
  private readonly overflow = new Map<string, number>();
  /** The read model's orders: every order this index names is held there. */
  private declare readonly orders: ReadonlyMap<number, ClientIdOwner>;

  constructor(orders: ReadonlyMap<number, ClientIdOwner>) {
    this.orders = orders;
  }

  get size(): number {
    return this.by_hash.size + this.overflow.size;
  }

  /** The pair now points at `order_id`. */
  set(account: number, client_order_id: string, order_id: number): void {
    const h = clientIdHash(account, client_order_id);
    const held = this.by_hash.get(h);
    if (held !== undefined && held !== order_id) {
      const o = this.orders.get(held);
      if (o !== undefined && (o.account !== account || o.client_order_id !== client_order_id)) {
        this.overflow.set(`${account}:${client_order_id}`, order_id);
        return;
      }
    }
    this.by_hash.set(h, order_id);
    if (this.overflow.size > 0) this.overflow.delete(`${account}:${client_order_id}`);
  }

  /** The newest order using the pair, if still indexed. */
  get(account: number, client_order_id: string): number | undefined {
    const id = this.by_hash.get(clientIdHash(account, client_order_id));
    if (id !== undefined) {
      const o = this.orders.get(id);
      if (o !== undefined && o.account === account && o.client_order_id === client_order_id) return id;
    }
    return this.overflow.size === 0 ? undefined : this.overflow.get(`${account}:${client_order_id}`);
  }

  /** Order `order_id` of the pair is forgotten: the pair goes if it still points at it. */
  forget(account: number, client_order_id: string, order_id: number): void {
    const h = clientIdHash(account, client_order_id);
    if (this.by_hash.get(h) === order_id) {
      this.by_hash.delete(h);
      return;
    }
    if (this.overflow.size > 0) {
      const key = `${account}:${client_order_id}`;
      if (this.overflow.get(key) === order_id) this.overflow.delete(key);
    }
  }

  /** Every pair as `account:client_order_id` and its order (snapshots). */
  *entries(): IterableIterator<[string, number]> {
    for (const id of this.by_hash.values()) {
      const o = this.orders.get(id) as ClientIdOwner;
      yield [`${o.account}:${o.client_order_id}`, id];
    }
    yield* this.overflow;
  }

  /** Loads a snapshot's `account:client_order_id` key (the orders are loaded first). */
  setKey(key: string, order_id: number): void {
    const colon = key.indexOf(':');
    this.set(Number(key.slice(0, colon)), key.slice(colon + 1), order_id);
  }
}
