// Nonce source: strictly increasing per wallet, never repeating, even with many calls in flight
// (JavaScript runs next() synchronously, so two calls can never read the same `last`).
// Default: max(last + 1, Date.now() * 1000), i.e. microseconds since the epoch, which stays
// below 2^53 until the year 2255 and survives a process restart (the clock moved on).

export interface NonceSource {
  /** The next nonce, above every nonce returned before and above any seen high-water mark. */
  next(): number;
  /** Raises the floor: the next nonce will be above `high_water` (e.g. the server's `nonce_high_water`). */
  observe(high_water: number): void;
  /** The last nonce returned (or observed floor). */
  readonly last: number;
}

export interface MonotonicNonceOptions {
  /** Clock in ms (default Date.now). */
  now?: () => number;
  /** Multiplier of the clock (default 1000: microseconds). 0 gives a plain counter 1, 2, 3... */
  scale?: number;
  /** Starting floor: the first nonce is above it. */
  start?: number;
}

export class MonotonicNonce implements NonceSource {
  #last: number;
  readonly #now: () => number;
  readonly #scale: number;

  constructor(opts: MonotonicNonceOptions = {}) {
    this.#last = opts.start ?? 0;
    this.#now = opts.now ?? Date.now;
    this.#scale = opts.scale ?? 1000;
  }

  get last(): number {
    return this.#last;
  }

  next(): number {
    const clock = Math.floor(this.#now() * this.#scale);
    const n = Math.max(this.#last + 1, clock);
    if (!Number.isSafeInteger(n)) throw new RangeError('nonce space exhausted (above 2^53 - 1)');
    this.#last = n;
    return n;
  }

  observe(high_water: number): void {
    if (Number.isSafeInteger(high_water) && high_water > this.#last) this.#last = high_water;
  }
}
