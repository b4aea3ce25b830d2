// The front's reader of the event ring (the matcher link's pump): a batch's events are copied
// aside until its commit marker arrives (batches commit in order, but batch N+1's events may
// precede N's marker); only then are they handed on, so nothing uncommitted is ever shown. The
// front sleeps between batches on the ring's loop bell when it is built (src/ring/ring_wake.ts:
// the matcher's wake-up calls `drain` straight from this loop), else in Atomics.waitAsync.
import { RecordBuffer, viewsOfRing } from '../ring/records.js';
import { BatchField, EventCursor, EventReader, EventType } from '../ring/event_records.js';
import type { SpscRing } from '../ring/spsc_ring.js';
import { consumeOnLoop, type LoopConsumer } from '../ring/ring_wake.js';

/**
 * Receives a committed batch: its `records` records, BATCH_BEGIN to BATCH_COMMITTED, read through
 * `fields` (set `fields.o` to `k * RECORD_WORDS` for the k-th; valid during the call only).
 */
export type CommittedBatch = (fields: EventCursor, records: number) => void;

/** Starts reading `events` on this thread's loop; each committed batch goes to `dispatch`. */
export function pumpEvents(events: SpscRing, dispatch: CommittedBatch, wake: 'bell' | 'atomics',
  keepAwake: (() => boolean) | undefined): LoopConsumer {
  const ring_views = viewsOfRing(events);
  const reader = new EventReader(ring_views);
  const fields = new EventCursor(reader);
  const open_batches: { id: number; buffer: RecordBuffer }[] = [];
  const spare: RecordBuffer[] = [];
  const drain = (): void => {
    const n = events.available();
    for (let i = 0; i < n; i++) {
      const o = events.slotOffset(i);
      const type = reader.type(o);
      if (type === EventType.BATCH_BEGIN) {
        const buffer = spare.pop() ?? new RecordBuffer(256);
        buffer.clear();
        open_batches.push({ id: reader.field(o, BatchField.BATCH_ID), buffer });
        buffer.push(ring_views, o);
      } else if (type === EventType.BATCH_COMMITTED) {
        const id = reader.field(o, BatchField.BATCH_ID);
        const b = open_batches.shift();
        if (b === undefined || b.id !== id) throw new Error(`event stream: commit of batch ${id} out of order`);
        b.buffer.push(ring_views, o);
        reader.setViews(b.buffer.views);
        dispatch(fields, b.buffer.count);
        reader.setViews(ring_views);
        spare.push(b.buffer);
      } else {
        const b = open_batches[open_batches.length - 1];
        if (b === undefined) throw new Error('event stream: event outside a batch');
        b.buffer.push(ring_views, o);
      }
    }
    if (n > 0) events.release(n);
  };
  return consumeOnLoop(events, drain, wake, keepAwake);
}
