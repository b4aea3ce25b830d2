// The client-id index (src/read_model/client_id_index.ts): keyed by a 32-bit hash of (account,
// client id), checked against the order it finds, with an exact map for a pair whose hash another
// held pair owns. These pairs collide for real (found by search), so the overflow path runs.
import { describe, expect, it } from 'vitest';
import { ClientIdIndex, clientIdHash, type ClientIdOwner } from '../../src/read_model/client_id_index.js';

const A = { account: 1, client_order_id: 'c26378' };
const B = { account: 1, client_order_id: 'c127192' };

function index(): { ix: ClientIdIndex; orders: Map<number, ClientIdOwner> } {
  const orders = new Map<number, ClientIdOwner>();
  return { ix: new ClientIdIndex(orders), orders };
}

describe('client id index', () => {
  it('uses pairs whose hashes collide', () => {
    expect(clientIdHash(A.account, A.client_order_id)).toBe(clientIdHash(B.account, B.client_order_id));
    expect(clientIdHash(1, 'x')).not.toBe(clientIdHash(2, 'x'));
    // A small integer (a Smi key in the map, no heap number per key).
    expect(Number.isInteger(clientIdHash(4_000_000_000, 'a'.repeat(36)))).toBe(true);
    expect(Math.abs(clientIdHash(4_000_000_000, 'a'.repeat(36)))).toBeLessThan(2 ** 31 + 1);
  });

  it('finds each of two colliding pairs, forgets each by its own order, and keeps a pair in one map only', () => {
    const { ix, orders } = index();
    orders.set(10, A);
    ix.set(A.account, A.client_order_id, 10);
    orders.set(11, B);
    ix.set(B.account, B.client_order_id, 11);
    expect(ix.get(A.account, A.client_order_id)).toBe(10);
    expect(ix.get(B.account, B.client_order_id)).toBe(11);
    expect(ix.get(2, A.client_order_id)).toBeUndefined();
    expect(ix.size).toBe(2);
    expect([...ix.entries()]).toEqual([['1:c26378', 10], ['1:c127192', 11]]);
    // Forgetting an order of the pair it no longer points at changes nothing (forget is called
    // with the order's own pair: order ids are unique).
    ix.forget(A.account, A.client_order_id, 9);
    ix.forget(B.account, B.client_order_id, 8);
    expect(ix.size).toBe(2);
    // A goes: B still found (in the exact map).
    ix.forget(A.account, A.client_order_id, 10);
    orders.delete(10);
    expect(ix.get(A.account, A.client_order_id)).toBeUndefined();
    expect(ix.get(B.account, B.client_order_id)).toBe(11);
    // B placed again (order 12): it takes the free hash and leaves the exact map.
    orders.set(12, B);
    ix.set(B.account, B.client_order_id, 12);
    expect(ix.get(B.account, B.client_order_id)).toBe(12);
    expect([...ix.entries()]).toEqual([['1:c127192', 12]]);
    // Order 11 forgotten later: B keeps pointing at 12.
    ix.forget(B.account, B.client_order_id, 11);
    orders.delete(11);
    expect(ix.get(B.account, B.client_order_id)).toBe(12);
    // A placed again while B owns the hash: A in the exact map, re-pointed there by a newer order.
    orders.set(13, A);
    ix.set(A.account, A.client_order_id, 13);
    orders.set(14, A);
    ix.set(A.account, A.client_order_id, 14);
    expect(ix.get(A.account, A.client_order_id)).toBe(14);
    expect(ix.size).toBe(2);
  });

  it('loads what it exported (snapshots: account:client_order_id keys), collisions included', () => {
    const { ix, orders } = index();
    const C = { account: 7, client_order_id: 'with:colon' };
    for (const [id, o] of [[10, A], [11, B], [12, C]] as const) {
      orders.set(id, o);
      ix.set(o.account, o.client_order_id, id);
    }
    const exported = [...ix.entries()];
    expect(exported).toEqual([['1:c26378', 10], ['7:with:colon', 12], ['1:c127192', 11]]);
    const fresh = new ClientIdIndex(orders);
    for (const [k, id] of exported) fresh.setKey(k, id);
    expect([...fresh.entries()]).toEqual(exported);
    for (const [id, o] of [[10, A], [11, B], [12, C]] as const) expect(fresh.get(o.account, o.client_order_id)).toBe(id);
  });
});
