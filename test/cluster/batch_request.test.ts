// A gateway's request for a batch (src/cluster/batch_request.ts): what a matcher reads back of what
// a gateway wrote, hostile headers refused, and what the matcher does with each request: a standby
// and an already answered request ignored, any number of waiting requests answered by one batch,
// and empty batches for requests spaced however many come. The real leader's side, over NATS, is
// test/cluster/batch_request_cluster.test.ts.
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import {
  BATCH_REQUEST_VERSION, BatchRequests, batchRequestHeaders, readBatchRequest, type BatchRequestTarget,
} from '../../src/cluster/batch_request.js';

describe('the batch request message', () => {
  it('round-trips the gateway and its last batch (-1: none yet)', () => {
    expect(readBatchRequest(batchRequestHeaders({ gateway: 'g-1_a', after_batch_id: 41 }))).toEqual({ gateway: 'g-1_a', after_batch_id: 41 });
    expect(readBatchRequest(batchRequestHeaders({ gateway: 'g1', after_batch_id: -1 }))?.after_batch_id).toBe(-1);
  });

  it('ignores another version and messages without headers; refuses a malformed version 1', () => {
    const other = batchRequestHeaders({ gateway: 'g1', after_batch_id: 3 });
    other.set('Rb-Batch-Request-Version', String(BATCH_REQUEST_VERSION + 1));
    expect(readBatchRequest(other)).toBeNull();
    expect(readBatchRequest(undefined)).toBeNull();
    expect(readBatchRequest(headers())).toBeNull();
    for (const after of ['', 'x', '-2', '1.5', '1e3', '9'.repeat(30), '9007199254740993', '+7']) {
      const bad = batchRequestHeaders({ gateway: 'g1', after_batch_id: 3 });
      bad.set('Rb-After-Batch', after);
      expect(() => readBatchRequest(bad), after).toThrow(/Rb-After-Batch/);
    }
    for (const gateway of ['', 'a b', 'g1\u0000', 'x'.repeat(65), 'é']) {
      const bad = batchRequestHeaders({ gateway: 'g1', after_batch_id: 3 });
      bad.set('Rb-Gateway', gateway);
      expect(() => readBatchRequest(bad), gateway).toThrow(/Rb-Gateway/);
    }
  });
});

/** A matcher as BatchRequests sees it. */
function target(leading: boolean, batch_id: number): BatchRequestTarget & { wakes: number; lead: boolean; batch: number } {
  const t = {
    wakes: 0, lead: leading, batch: batch_id,
    leading: () => t.lead, batchId: () => t.batch, wake: () => {
      t.wakes++;
    },
  };
  return t;
}

describe('a matcher hearing batch requests', () => {
  const SPACING_MS = 1_000;

  it('a standby ignores them; a leader ignores one its last batch already answers', () => {
    const r = new BatchRequests(SPACING_MS);
    const standby = target(false, 10);
    r.heard(batchRequestHeaders({ gateway: 'g1', after_batch_id: 10 }), standby);
    expect(r.counts).toMatchObject({ received: 1, ignored_standby: 1 });
    expect(r.dueInMs(0)).toBe(Infinity);
    const leader = target(true, 10);
    r.heard(batchRequestHeaders({ gateway: 'g1', after_batch_id: 9 }), leader);
    expect(r.counts).toMatchObject({ received: 2, ignored_answered: 1 });
    expect(r.dueInMs(0)).toBe(Infinity);
    expect(leader.wakes).toBe(0);
  });

  it('refuses malformed ones and other versions (counted), whoever hears them', () => {
    const r = new BatchRequests(SPACING_MS);
    const leader = target(true, 0);
    const bad = batchRequestHeaders({ gateway: 'g1', after_batch_id: 0 });
    bad.set('Rb-After-Batch', '-5');
    r.heard(bad, leader);
    r.heard(undefined, leader);
    expect(r.counts).toMatchObject({ received: 2, refused: 2 });
    expect(r.dueInMs(0)).toBe(Infinity);
  });

  it('answers any number of waiting requests with one batch, and spaces empty batches for them', () => {
    const r = new BatchRequests(SPACING_MS);
    const leader = target(true, 5);
    const t0 = 1_000_000;
    for (let i = 0; i < 1000; i++) r.heard(batchRequestHeaders({ gateway: 'g1', after_batch_id: 5 }), leader);
    expect(leader.wakes).toBe(1);
    expect(r.dueInMs(t0)).toBe(0);
    r.batchCut(true, t0);
    leader.batch = 6;
    expect(r.counts.empty_batches).toBe(1);
    expect(r.dueInMs(t0)).toBe(Infinity);
    // A flood with an Rb-After-Batch far ahead (a hostile or buggy gateway): waits out the spacing.
    for (let i = 0; i < 1000; i++) r.heard(batchRequestHeaders({ gateway: 'g2', after_batch_id: 2 ** 53 - 1 }), leader);
    expect(r.dueInMs(t0 + 1)).toBe(SPACING_MS - 1);
    expect(r.dueInMs(t0 + SPACING_MS)).toBe(0);
    // A batch with requests in it answers them too, and is no empty batch for them.
    r.batchCut(false, t0 + 10);
    expect(r.dueInMs(t0 + SPACING_MS)).toBe(Infinity);
    expect(r.counts.empty_batches).toBe(1);
    expect(r.counts.received).toBe(2000);
    // A new leadership starts with nothing waiting.
    r.heard(batchRequestHeaders({ gateway: 'g1', after_batch_id: 6 }), leader);
    expect(r.dueInMs(t0 + SPACING_MS)).toBe(0);
    r.reset();
    expect(r.dueInMs(t0 + SPACING_MS)).toBe(Infinity);
  });
});
