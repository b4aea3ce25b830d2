// Compact JSON text written as UTF-8 bytes into one reusable buffer and read out as one flat
// string: for texts built once per request on the front thread (issue 11), the JSON form of a
// signed order and the accepted-order answer. A template literal of ~30 parts builds a chain of
// ~30 cons strings, a string per number and, once read, a flat copy (~1,260 bytes of garbage per
// order answer); here it is the one string read out (~430). Portable (Uint8Array, TextDecoder):
// the SDK writes the same signed texts in a browser.

/** The buffer's start size; it doubles when a text needs more (an answer with many fills). */
const INITIAL_BYTES = 2048;

/** Runs longer than this are copied with set() (a memmove), shorter ones byte by byte: an order answer took 600 ns at 8, 640 at 16, 725 at 64, 670 at 0 (micro-bench, 2026-11-26). */
const APPEND_LOOP_BYTES_MAX = 8;

const utf8_out = new TextEncoder();
const utf8_in = new TextDecoder();

/** UTF-8 bytes read out as a string (the one decoder of JsonText's output, envelope.ts's bodyText too). */
export function utf8Text(bytes: Uint8Array): string {
  return utf8_in.decode(bytes);
}

/**
 * A fixed run of JSON text (member names, punctuation) as the bytes JsonText.append copies,
 * encoded once at module load by its callers (the signed order's JSON form, the order answer).
 * ASCII only, as append requires: anything else is refused here, at load, not garbled later.
 */
export function asciiRun(text: string): Uint8Array {
  const bytes = utf8_out.encode(text);
  if (bytes.length !== text.length) throw new RangeError(`asciiRun: ${JSON.stringify(text)} is not ASCII`);
  return bytes;
}

/** Node's Buffer when there is one: its latin1 read of ASCII bytes needs no view (~120 ns less per text). */
const NodeBuffer: typeof Buffer | null = typeof Buffer === 'function' ? Buffer : null;

function newBytes(size: number): Uint8Array {
  return NodeBuffer !== null ? NodeBuffer.allocUnsafeSlow(size) : new Uint8Array(size);
}

/** Writes `v` (0 <= v < 1e9) in decimal at b[at], at least `width` digits (zeros in front); returns the end. */
function digits(b: Uint8Array, at: number, v: number, width: number): number {
  let len = 1;
  for (let p = 10; p <= v && len < 9; p *= 10) len++;
  if (len < width) len = width;
  let u = v | 0;
  for (let i = at + len - 1; i >= at; i--) {
    const q = (u / 10) | 0;
    b[i] = 0x30 + u - 10 * q;
    u = q;
  }
  return at + len;
}

export class JsonText {
  private bytes = newBytes(INITIAL_BYTES);
  private n = 0;
  /** Only ASCII written since begin(): the bytes read the same as latin1. */
  private ascii = true;

  /** Starts a new text (a string read out before is unaffected). */
  begin(): this {
    this.n = 0;
    this.ascii = true;
    return this;
  }

  /** Text as is: JSON punctuation and member names. */
  raw(s: string): this {
    const len = s.length;
    this.room(len);
    const b = this.bytes;
    let n = this.n;
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) return this.utf8(s); // not ASCII: written as UTF-8 from the start
      b[n++] = c;
    }
    this.n = n;
    return this;
  }

  /**
   * ASCII bytes as they are: a run of JSON text encoded once by the caller (member names, a cached
   * run of an answer), copied instead of read char by char as raw() does. Only ASCII: text() reads
   * the buffer as latin1 while nothing else non-ASCII was written.
   */
  append(src: Uint8Array): this {
    const len = src.length;
    this.room(len);
    const b = this.bytes;
    let n = this.n;
    if (len > APPEND_LOOP_BYTES_MAX) {
      b.set(src, n);
      n += len;
    } else {
      for (let i = 0; i < len; i++) b[n++] = src[i];
    }
    this.n = n;
    return this;
  }

  /** Whether only ASCII was written since begin() (its bytes are its latin1 text). */
  get isAscii(): boolean {
    return this.ascii;
  }

  /** A number as JSON.stringify writes it: digits for a safe integer, else String(x), null when not finite. */
  num(x: number): this {
    if (!Number.isSafeInteger(x)) return this.raw(Number.isFinite(x) ? String(x) : 'null');
    this.room(17); // "-" and 16 digits: 2^53 - 1 has 16
    let v = x;
    if (v < 0) {
      this.bytes[this.n++] = 0x2d;
      v = -v;
    }
    // Digits in 32-bit integer steps (prices in units pass 2^31): the high part, then the low nine.
    if (v < 1e9) this.n = digits(this.bytes, this.n, v, 0);
    else {
      const high = Math.floor(v / 1e9);
      this.n = digits(this.bytes, digits(this.bytes, this.n, high, 0), v - high * 1e9, 9);
    }
    return this;
  }

  /** A string as JSON.stringify writes it (quoted; escapes and non-ASCII through JSON.stringify itself). */
  str(s: string): this {
    const len = s.length;
    this.room(len + 2);
    const b = this.bytes;
    let n = this.n;
    b[n++] = 0x22;
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return this.utf8(JSON.stringify(s));
      b[n++] = c;
    }
    b[n++] = 0x22;
    this.n = n;
    return this;
  }

  /** The text written since begin(), as one flat string. */
  text(): string {
    const b = this.bytes;
    if (this.ascii && NodeBuffer !== null && b instanceof NodeBuffer) return b.toString('latin1', 0, this.n);
    return utf8_in.decode(b.subarray(0, this.n));
  }

  /**
   * The text written since begin() as UTF-8 bytes: a view of the reused buffer, valid until the
   * next begin() (no string: the HTTP reply hands them to uWS as they are).
   */
  view(): Uint8Array {
    return this.bytes.subarray(0, this.n);
  }

  /** Any string, as UTF-8 (the rare path: a string JSON escapes or that is not ASCII). */
  private utf8(s: string): this {
    this.room(3 * s.length); // UTF-8 needs at most 3 bytes per UTF-16 unit
    const written = utf8_out.encodeInto(s, this.bytes.subarray(this.n)).written;
    if (written !== s.length) this.ascii = false; // a char took more than one byte
    this.n += written;
    return this;
  }

  private room(more: number): void {
    if (this.n + more <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.n + more) size *= 2;
    const grown = newBytes(size);
    grown.set(this.bytes.subarray(0, this.n));
    this.bytes = grown;
  }
}
