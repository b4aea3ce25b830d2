// The requests waiting for their answers, by seq (PendingAnswers, outcomes.ts): a Map's get, set
// and delete, on a fixed array indexed by the seq's low bits, with a Map for what does not fit.
// Seqs are numbered one by one as requests are written and answered nearly in that order (the
// matcher applies the ring in order), so the live seqs sit in a window narrower than the array and
// each finds its own slot; a seq whose slot another live seq holds (a request left unanswered far
// behind, or more in flight than the array has slots) goes to the overflow Map, whatever its age.
// Why not a Map alone: ~5 lookups per signed request (its write, its ACCEPTED, order update and fill
// events, its release) hashed into a table that a delete per request keeps rehashing (issue 11).

/** Slots of the array (a power of two): ~4x the requests in flight at the load bench's max rate. */
export const SEQ_TABLE_SLOTS = 4096;

export class SeqTable<T> {
  private declare readonly values: (T | undefined)[];
  /** The seq each slot holds (-1: none). */
  private declare readonly seqs: Float64Array;
  private declare readonly mask: number;
  private readonly overflow = new Map<number, T>();
  private count = 0;

  /** `slots`: a power of two (tests use small ones to force the overflow). */
  constructor(slots = SEQ_TABLE_SLOTS) {
    if (!Number.isSafeInteger(slots) || slots < 1 || (slots & (slots - 1)) !== 0) throw new RangeError(`slots must be a power of two, got ${slots}`);
    this.values = new Array<T | undefined>(slots).fill(undefined);
    this.seqs = new Float64Array(slots).fill(-1);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.count;
  }

  /** `seq`: a non-negative safe integer. */
  get(seq: number): T | undefined {
    const i = seq & this.mask;
    if (this.seqs[i] === seq) return this.values[i];
    return this.overflow.size === 0 ? undefined : this.overflow.get(seq);
  }

  set(seq: number, value: T): void {
    const i = seq & this.mask;
    const held = this.seqs[i];
    if (held === seq) {
      this.values[i] = value;
    } else if (held === -1 && (this.overflow.size === 0 || !this.overflow.has(seq))) {
      this.seqs[i] = seq;
      this.values[i] = value;
      this.count++;
    } else {
      if (!this.overflow.has(seq)) this.count++;
      this.overflow.set(seq, value);
    }
  }

  delete(seq: number): boolean {
    const i = seq & this.mask;
    if (this.seqs[i] === seq) {
      this.seqs[i] = -1;
      this.values[i] = undefined;
      this.count--;
      return true;
    }
    if (this.overflow.size > 0 && this.overflow.delete(seq)) {
      this.count--;
      return true;
    }
    return false;
  }
}
