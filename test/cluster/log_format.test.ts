// The batch message header of the event stream: written and read back, and a message this
// program did not write (missing or non-integer headers, a body that is not whole records, fewer
// bytes than the inputs it claims) refused with a message naming what is wrong.
import { describe, expect, it } from 'vitest';
import { headers } from '@nats-io/transport-node';
import { batchHeaders, RECORD_BYTES, readBatchHeader, type BatchHeader } from '../../src/cluster/log_format.js';

const H: BatchHeader = {
  batch_id: 42, time_ms: 1_795_000_000_123, requests_through: 977, input_records: 3,
  state_root: '0x' + '11'.repeat(32), fills_root: '0x' + '22'.repeat(32), leader: 'm2',
};

describe('event stream batch headers', () => {
  it('reads back what it wrote', () => {
    expect(readBatchHeader(batchHeaders(H), 10 * RECORD_BYTES)).toEqual(H);
  });

  it('refuses a message without headers or with a non-integer field', () => {
    expect(() => readBatchHeader(undefined, 0)).toThrow('without headers');
    const bad = batchHeaders(H);
    bad.set('Rb-Batch', '4x2');
    expect(() => readBatchHeader(bad, 10 * RECORD_BYTES)).toThrow('header Rb-Batch is "4x2"');
    const missing = headers();
    expect(() => readBatchHeader(missing, 0)).toThrow('header Rb-Batch');
  });

  it('refuses a body of partial records or shorter than its inputs', () => {
    expect(() => readBatchHeader(batchHeaders(H), 10 * RECORD_BYTES + 4)).toThrow('does not hold 3 inputs and whole events');
    expect(() => readBatchHeader(batchHeaders(H), 2 * RECORD_BYTES)).toThrow('does not hold 3 inputs');
  });
});
