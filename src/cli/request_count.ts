// What `ringbook journal inspect` and `ringbook replay` count as a journal batch's requests.
import { RECORD_WORDS, viewsOfRecords } from '../ring/records.js';
import { RequestReader } from '../ring/request_records.js';

/**
 * The requests among a journal batch's `count` records: the consent slots that follow signed
 * requests (src/ring/consent.ts) are records, not requests. `journal inspect` and `replay` both
 * count this way (replay once counted the slots too: 13 "requests" for 6).
 */
export function requestsOfBatch(records: Int32Array, count: number): { requests: number; consent_slots: number } {
  const reader = new RequestReader(viewsOfRecords(records));
  let consent_slots = 0;
  for (let k = 0; k < count; k++) if (reader.isConsent(k * RECORD_WORDS)) consent_slots++;
  return { requests: count - consent_slots, consent_slots };
}
