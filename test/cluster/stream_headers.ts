// The batch header a test's stand-in event stream carries for batch `batch_id` (the leader's
// BatchHeader, src/cluster/log_format.ts): its time 1 s per batch, no inputs, no fills root, leader
// 'x'. The snapshot tests (matcher, gateway, staging) build their streams from it.
import type { BatchHeader } from '../../src/cluster/log_format.js';

export function streamHeader(batch_id: number, state_root: string, requests_through: number): BatchHeader {
  return { batch_id, time_ms: 1_000 * batch_id, requests_through, input_records: 0, state_root, fills_root: '', leader: 'x' };
}
