// Per-wallet arrival order: continuations run in ticket order per wallet, whatever order the
// signature checks finish in; wallets do not wait for each other.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArrivalOrder } from '../../src/gateway/arrival_order.js';

describe('ArrivalOrder', () => {
  it('releases each wallet in ticket order for any completion order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 40 }),
        fc.func(fc.integer()),
        (wallets, key) => {
          const order = new ArrivalOrder();
          const tickets = wallets.map((w) => ({ w, t: order.take(w) }));
          // Complete in a scrambled order.
          const scrambled = tickets.map((x, i) => ({ ...x, k: key(i) })).sort((x, y) => x.k - y.k);
          const ran: { w: string; t: number }[] = [];
          for (const x of scrambled) order.release(x.w, x.t, () => ran.push({ w: x.w, t: x.t }));
          expect(ran.length).toBe(tickets.length);
          for (const w of ['a', 'b', 'c']) {
            const seen = ran.filter((r) => r.w === w).map((r) => r.t);
            expect(seen).toEqual([...seen].sort((x, y) => x - y));
          }
          expect(order.size).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a later ticket waits for an earlier one of the same wallet only', () => {
    const order = new ArrivalOrder();
    const ran: string[] = [];
    const a0 = order.take('a');
    const a1 = order.take('a');
    const b0 = order.take('b');
    order.release('a', a1, () => ran.push('a1'));
    order.release('b', b0, () => ran.push('b0'));
    expect(ran).toEqual(['b0']);
    order.release('a', a0, () => ran.push('a0'));
    expect(ran).toEqual(['b0', 'a0', 'a1']);
  });

  it('a continuation that takes and releases its wallet\'s next tickets runs them after itself, in order', () => {
    const order = new ArrivalOrder();
    const ran: string[] = [];
    const a0 = order.take('a');
    order.release('a', a0, () => {
      ran.push('a0 start');
      const a1 = order.take('a');
      const a2 = order.take('a');
      order.release('a', a2, () => ran.push('a2'));
      order.release('a', a1, () => ran.push('a1'));
      ran.push('a0 end');
    });
    expect(ran).toEqual(['a0 start', 'a0 end', 'a1', 'a2']);
    expect(order.size).toBe(0);
    // A ticket taken while another is held waits for its done.
    const h = order.take('a');
    let done: (() => void) | null = null;
    order.releaseHeld('a', h, (d) => (done = d));
    const next = order.take('a');
    order.release('a', next, () => ran.push('after held'));
    expect(ran).toHaveLength(4);
    (done as unknown as () => void)();
    expect(ran[4]).toBe('after held');
    expect(order.size).toBe(0);
  });

  it('a throwing continuation does not block the ones behind it', () => {
    const order = new ArrivalOrder();
    const ran: number[] = [];
    const t0 = order.take('w');
    const t1 = order.take('w');
    order.release('w', t1, () => ran.push(1));
    order.release('w', t0, () => {
      throw new Error('boom');
    });
    expect(ran).toEqual([1]);
  });

  it('a held continuation keeps the wallet\'s later tickets waiting until done (a batch of two wallets)', () => {
    const order = new ArrivalOrder();
    const ran: string[] = [];
    const b_earlier = order.take('b'); // b has a request in flight before the batch
    const batch_a = order.take('a');
    const batch_b = order.take('b');
    const a_later = order.take('a'); // a sends again after the batch
    const dones: (() => void)[] = [];
    const part = (done: () => void): void => {
      dones.push(done);
      if (dones.length === 2) {
        ran.push('batch');
        for (const d of dones) d();
      }
    };
    order.releaseHeld('a', batch_a, part);
    order.release('a', a_later, () => ran.push('a_later'));
    // a's batch ticket ran but is held: a_later waits although it is ready.
    expect(ran).toEqual([]);
    order.releaseHeld('b', batch_b, part);
    expect(ran).toEqual([]);
    order.release('b', b_earlier, () => ran.push('b_earlier'));
    expect(ran).toEqual(['b_earlier', 'batch', 'a_later']);
    expect(order.size).toBe(0);
  });

  it('keeps each wallet\'s order over many rounds of forgotten and reused queues, held continuations included', () => {
    // Wallets come and go (their queues are forgotten when nothing waits, and reused by the next
    // wallets: arrival_order.ts FREE_QUEUES_MAX); some continuations hold their wallet until a
    // later step calls done. Per wallet, continuations run in ticket order, and a held one keeps
    // the later ones waiting until its done.
    fc.assert(
      fc.property(
        fc.array(fc.record({ w: fc.constantFrom('a', 'b', 'c', 'd'), held: fc.boolean(), key: fc.integer() }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 6 }),
        (steps, round_size) => {
          const order = new ArrivalOrder();
          const ran: { w: string; t: number; round: number }[] = [];
          const open = new Map<string, { t: number; done: () => void }>();
          const overlaps: string[] = [];
          for (let at = 0, round = 0; at < steps.length; at += round_size, round++) {
            const part = steps.slice(at, at + round_size);
            const tickets = part.map((x) => ({ ...x, t: order.take(x.w) }));
            for (const x of [...tickets].sort((p, q) => p.key - q.key)) {
              const record = (): void => {
                // Nothing else of this wallet runs while one of its continuations is held (noted,
                // not thrown: ArrivalOrder catches and logs what a continuation throws).
                if (open.has(x.w)) overlaps.push(`${x.w}${x.t}`);
                ran.push({ w: x.w, t: x.t, round });
              };
              if (x.held) order.releaseHeld(x.w, x.t, (done) => { record(); open.set(x.w, { t: x.t, done }); });
              else order.release(x.w, x.t, record);
            }
            // The held ones finish (in a scrambled order), which runs what waited behind them; a
            // request of the same wallet arriving while one is held waits for its done.
            let late = 0;
            while (open.size > 0) {
              const [w, h] = [...open.entries()].sort((p, q) => (p[1].t * 7 + p[0].charCodeAt(0)) % 5 - (q[1].t * 7 + q[0].charCodeAt(0)) % 5)[0];
              const t = order.take(w);
              late++;
              order.release(w, t, () => {
                if (open.has(w)) overlaps.push(`${w}${t} late`);
                ran.push({ w, t, round });
              });
              open.delete(w);
              h.done();
            }
            // Every ticket of the round ran; no wallet is left behind.
            expect(ran.filter((r) => r.round === round)).toHaveLength(part.length + late);
            expect(order.size).toBe(0);
          }
          expect(overlaps).toEqual([]);
          for (const w of ['a', 'b', 'c', 'd']) {
            const mine = ran.filter((r) => r.w === w);
            // Tickets restart at 0 for a forgotten wallet: in order within each round.
            for (let i = 1; i < mine.length; i++) {
              if (mine[i].round === mine[i - 1].round) expect(mine[i].t).toBe(mine[i - 1].t + 1);
              else expect(mine[i].t).toBe(0);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
