// Unit tests without a server: JSON body parsing, the admin token comparison, request ids,
// status lines and readBody on a scripted fake response (chunk neutering, abort ordering).
import fc from 'fast-check';
import type { HttpResponse } from 'uWebSockets.js';
import { describe, expect, it } from 'vitest';
import { CODE_HTTP_STATUS, CODE_NAMES } from '../../src/engine/codes.js';
import { AdminTokenCheck, adminTokenMatches } from '../../src/gateway/admin_auth.js';
import { httpStatusOf } from '../../src/gateway/envelope.js';
import { Reply } from '../../src/gateway/http_reply.js';
import { statusLine } from '../../src/gateway/reply_head.js';
import { parseContentLength, readBody, type BodyErrorKind } from '../../src/gateway/http_body.js';
import { parseJsonObject } from '../../src/gateway/json_object.js';
import { JsonBody, setRouteErrorReporter } from '../../src/gateway/http_route.js';
import { nextRequestId, REQUEST_ID_PREFIX, requestIdLength, requestIdText, writeRequestId } from '../../src/gateway/request_id.js';

function parse(text: string) {
  return parseJsonObject(Buffer.from(text, 'utf8'));
}

describe('parseJsonObject', () => {
  it('returns plain objects', () => {
    expect(parse('{"a":1,"b":[true,null,"x"],"c":{"d":-2.5}}')).toEqual({ ok: true, value: { a: 1, b: [true, null, 'x'], c: { d: -2.5 } } });
    expect(parse('\uFEFF{"bom":1}')).toEqual({ ok: true, value: { bom: 1 } });
    expect(parse(' \n{}\t')).toEqual({ ok: true, value: {} });
    // Keys that merely contain the forbidden words are fine, and so are such string values.
    expect(parse('{"proto":"__proto__","my_constructor":1,"prototypes":"constructor"}').ok).toBe(true);
  });

  it('accepts numbers whose value is exact: integers, real fractions, integer-valued exponents', () => {
    for (const text of ['{"a":1e3}', '{"a":1.0}', '{"a":0.9}', '{"a":-0}', '{"a":1.5e1}', '{"a":12.300e2}', '{"a":0.0e-5}', '{"a":9007199254740993}']) {
      expect(parse(text).ok).toBe(true);
    }
  });

  it('refuses non-integers that would round to an integer', () => {
    for (const lit of ['1.0000000000000001', '1e-400', '-1e-400', '9007199254740991.5', '123456789012345678.9', '0.1e-330']) {
      const r = parse(`{"q":${lit}}`);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/rounds to one/);
    }
    // Inside strings such text is just text.
    expect(parse('{"q":"1.0000000000000001","r":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}').ok).toBe(true);
  });

  it('refuses prototype keys at any depth, including escaped spellings', () => {
    for (const text of [
      '{"__proto__":1}',
      '{"constructor":1}',
      '{"prototype":1}',
      '{"a":[[{"b":{"__proto__":{}}}]]}',
      '{"\\u005f\\u005fproto\\u005f\\u005f":1}',
      '{"construct\\u006fr":{}}',
    ]) {
      const r = parse(text);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/forbidden key/);
    }
  });

  it('refuses depth over 32 before parsing; allows 32', () => {
    const nest = (d: number) => '{"a":'.repeat(d - 1) + '{}' + '}'.repeat(d - 1);
    expect(parse(nest(32)).ok).toBe(true);
    expect(parse(nest(33))).toEqual({ ok: false, message: 'body nests deeper than 32 levels' });
    expect(parse('['.repeat(100_000)).ok).toBe(false);
  });

  it('never throws and only returns objects on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.json({ maxDepth: 4 }), fc.uint8Array({ maxLength: 200 })), (input) => {
        const r = parseJsonObject(typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(input));
        if (r.ok) {
          expect(typeof r.value).toBe('object');
          expect(Array.isArray(r.value)).toBe(false);
        } else {
          expect(r.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('round-trips objects of generated JSON that hold only integers', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string().filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k)), fc.jsonValue({ maxDepth: 3 })), (obj) => {
        const text = JSON.stringify(obj);
        const r = parse(text);
        // Generated doubles may be non-integers that JSON.stringify writes exactly; those pass too.
        if (r.ok) expect(JSON.stringify(r.value)).toBe(text);
        else expect(r.message).toMatch(/forbidden key|nests deeper|rounds to one/);
      }),
      { numRuns: 500 },
    );
  });
});

describe('parseContentLength', () => {
  it('parses digits, ignores junk, flags absurd lengths', () => {
    expect(parseContentLength(undefined)).toBe(-1);
    expect(parseContentLength('')).toBe(-1);
    expect(parseContentLength('0')).toBe(0);
    expect(parseContentLength('1024')).toBe(1024);
    expect(parseContentLength('-1')).toBe(-1);
    expect(parseContentLength('1e3')).toBe(-1);
    expect(parseContentLength(' 5')).toBe(-1);
    expect(parseContentLength('9'.repeat(40))).toBe(Infinity);
  });
});

/** A scripted stand-in for uWS.HttpResponse: the test plays the onData / onAborted events. */
class FakeResponse {
  data?: (chunk: ArrayBuffer, last: boolean) => void;
  aborted?: () => void;
  onData(handler: (chunk: ArrayBuffer, last: boolean) => void): this {
    this.data = handler;
    return this;
  }
  onAborted(handler: () => void): this {
    this.aborted = handler;
    return this;
  }
  /** Delivers a chunk, then neuters its buffer as uWS does when the callback returns. */
  last_chunk: ArrayBuffer | null = null;
  push(bytes: Uint8Array, last: boolean): void {
    const ab = new ArrayBuffer(bytes.length);
    new Uint8Array(ab).set(bytes);
    this.last_chunk = ab;
    this.data!(ab, last);
    structuredClone(ab, { transfer: [ab] }); // detaches ab
  }
}

function collect(limit: number, content_length?: string) {
  const fake = new FakeResponse();
  const out: { body?: Buffer; in_place: boolean; errors: BodyErrorKind[] } = { errors: [], in_place: false };
  // The body is readable during onDone only (one chunk is read in place): copied here.
  readBody(fake as unknown as HttpResponse, limit, (b) => {
    out.body = Buffer.from(b);
    out.in_place = b.byteLength > 0 && b.buffer === fake.last_chunk;
  }, (k) => out.errors.push(k), content_length);
  return { fake, out };
}

describe('readBody on a scripted response', () => {
  it('copies chunks before uWS neuters them, with and without Content-Length', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 50 }), { maxLength: 20 }), fc.boolean(), (pieces, declare) => {
        const all = Buffer.concat(pieces);
        const { fake, out } = collect(10_000, declare ? String(all.length) : undefined);
        pieces.forEach((p, i) => fake.push(p, i === pieces.length - 1));
        if (pieces.length === 0) fake.push(new Uint8Array(0), true);
        expect(out.errors).toEqual([]);
        expect(out.body!.equals(all)).toBe(true);
      }),
    );
  });

  it('reads a body that came whole in one chunk in place (no copy), with and without Content-Length', () => {
    for (const declared of ['5', undefined]) {
      const { fake, out } = collect(100, declared);
      fake.push(new Uint8Array([1, 2, 3, 4, 5]), true);
      expect([...out.body!]).toEqual([1, 2, 3, 4, 5]);
      expect(out.in_place).toBe(true);
    }
    // Two chunks are copied before uWS empties the first.
    const { fake, out } = collect(100, '5');
    fake.push(new Uint8Array([1, 2]), false);
    fake.push(new Uint8Array([3, 4, 5]), true);
    expect([...out.body!]).toEqual([1, 2, 3, 4, 5]);
    expect(out.in_place).toBe(false);
    // One chunk over the limit is not a body.
    const big = collect(4, undefined);
    big.fake.push(new Uint8Array(5), true);
    expect(big.out.errors).toEqual(['too_large']);
    expect(big.out.body).toBeUndefined();
  });

  it('survives more bytes than Content-Length announced (switches to chunk mode)', () => {
    const { fake, out } = collect(100, '3');
    fake.push(new Uint8Array([1, 2]), false);
    fake.push(new Uint8Array([3, 4, 5]), true);
    expect([...out.body!]).toEqual([1, 2, 3, 4, 5]);
  });

  it('reports too_large once, as soon as the limit is passed, and ignores the rest', () => {
    const { fake, out } = collect(10);
    fake.push(new Uint8Array(6), false);
    fake.push(new Uint8Array(5), false);
    expect(out.errors).toEqual(['too_large']);
    fake.push(new Uint8Array(5), true);
    fake.aborted!();
    expect(out.errors).toEqual(['too_large']);
    expect(out.body).toBeUndefined();
  });

  it('reports too_large up front from Content-Length without registering onData', () => {
    const { fake, out } = collect(10, '11');
    expect(out.errors).toEqual(['too_large']);
    expect(fake.data).toBeUndefined();
  });

  it('reports aborted once and never calls onDone afterwards', () => {
    const { fake, out } = collect(100, '10');
    fake.push(new Uint8Array(4), false);
    fake.aborted!();
    expect(out.errors).toEqual(['aborted']);
    expect(out.body).toBeUndefined();
  });

  it('refuses a nonsense limit', () => {
    expect(() => collect(-1)).toThrow(RangeError);
    expect(() => collect(1.5)).toThrow(RangeError);
  });
});

describe('admin token comparison', () => {
  it('right, wrong, different length, empty, missing', () => {
    const check = new AdminTokenCheck('correct-horse-battery');
    expect(check.check('correct-horse-battery')).toBe(true);
    expect(check.check('correct-horse-batterx')).toBe(false);
    expect(check.check('correct-horse-battery ')).toBe(false);
    expect(check.check('correct')).toBe(false);
    expect(check.check('CORRECT-HORSE-BATTERY')).toBe(false);
    expect(check.check('')).toBe(false);
    expect(check.check(undefined)).toBe(false);
    expect(adminTokenMatches('x'.repeat(10_000), 'correct-horse-battery')).toBe(false);
    expect(adminTokenMatches('é', 'é')).toBe(true);
  });

  it('an empty configured token authorizes nothing', () => {
    expect(adminTokenMatches('', '')).toBe(false);
    expect(adminTokenMatches('anything', '')).toBe(false);
  });

  it('matches exactly when the strings are equal', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string(), (configured, presented) => {
        expect(adminTokenMatches(presented, configured)).toBe(presented === configured);
        expect(adminTokenMatches(configured, configured)).toBe(true);
      }),
    );
  });
});

describe('request ids', () => {
  it('have the per-process prefix and never repeat', () => {
    expect(REQUEST_ID_PREFIX).toMatch(/^[0-9a-f]{12}$/);
    const ids = new Set<string>();
    for (let i = 0; i < 100_000; i++) ids.add(nextRequestId());
    expect(ids.size).toBe(100_000);
    for (const id of [...ids].slice(0, 100)) expect(id).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
  });

  it('written as bytes from the number (the reply head) are the bytes of the text, at every digit count', () => {
    const ns = [1, 9, 10, 35, 36, 37, 1295, 1296, 46655, 46656, 2 ** 31, 2 ** 32 + 7, Number.MAX_SAFE_INTEGER];
    for (let n = 1; n < 3000; n += 7) ns.push(n);
    const out = Buffer.alloc(64, 0x2a);
    for (const n of ns) {
      const text = requestIdText(n);
      expect(text).toBe(`${REQUEST_ID_PREFIX}-${n.toString(36)}`);
      expect(requestIdLength(n)).toBe(text.length);
      out.fill(0x2a);
      expect(writeRequestId(n, out, 5)).toBe(5 + text.length);
      expect(out.subarray(5, 5 + text.length).toString('latin1')).toBe(text);
      expect(out[4]).toBe(0x2a); // nothing written outside the id
      expect(out[5 + text.length]).toBe(0x2a);
    }
  });
});

describe('status lines', () => {
  it('name the statuses the gateway uses and follow CODE_HTTP_STATUS', () => {
    expect(statusLine(200)).toBe('200 OK');
    expect(statusLine(400)).toBe('400 Bad Request');
    expect(statusLine(401)).toBe('401 Unauthorized');
    expect(statusLine(404)).toBe('404 Not Found');
    expect(statusLine(429)).toBe('429 Too Many Requests');
    expect(statusLine(500)).toBe('500 Internal Server Error');
    expect(statusLine(503)).toBe('503 Service Unavailable');
    expect(statusLine(418)).toBe('418 Client Error');
    for (let c = 1; c < CODE_NAMES.length; c++) expect(httpStatusOf(CODE_NAMES[c])).toBe(CODE_HTTP_STATUS[c]);
    expect(httpStatusOf('OK')).toBe(500);
    expect(httpStatusOf('BOGUS')).toBe(500);
  });
});

/** A response that also takes a written answer (cork, status, headers, end). */
class AnswerableResponse extends FakeResponse {
  ended: string | null = null;
  cork(fn: () => void): this {
    fn();
    return this;
  }
  writeStatus(): this {
    return this;
  }
  writeHeader(): this {
    return this;
  }
  end(body: string | Uint8Array): this {
    this.ended = typeof body === 'string' ? body : Buffer.from(body).toString();
    return this;
  }
}

describe('Reply counted as an open exchange', () => {
  it('stays counted until its answer is written, once', () => {
    const res = new AnswerableResponse();
    const counter = { open_exchanges: 0, access_log: false };
    const reply = new Reply(res as unknown as HttpResponse);
    reply.countIn(counter);
    expect(counter.open_exchanges).toBe(1);
    expect(reply.okBody(new TextEncoder().encode('{"ok":true,"data":1}'))).toBe(true);
    expect(res.ended).toBe('{"ok":true,"data":1}');
    expect(counter.open_exchanges).toBe(0);
    expect(reply.ok(2)).toBe(false); // a second answer is ignored, and not uncounted again
    expect(counter.open_exchanges).toBe(0);
  });

  it('is uncounted when the client aborts, before the body reader hears of it, and only once', () => {
    const res = new AnswerableResponse();
    const counter = { open_exchanges: 0, access_log: false };
    const reply = new Reply(res as unknown as HttpResponse);
    reply.countIn(counter);
    const seen: number[] = [];
    readBody(res as unknown as HttpResponse, 100, () => {}, (k) => {
      expect(k).toBe('aborted');
      seen.push(counter.open_exchanges);
    });
    res.aborted!();
    expect(seen).toEqual([0]);
    expect(counter.open_exchanges).toBe(0);
    expect(reply.aborted).toBe(true);
    expect(reply.ok(1)).toBe(false);
    expect(counter.open_exchanges).toBe(0);
    // Counted after the abort: uncounted at once.
    const late = new Reply(res as unknown as HttpResponse);
    late.countIn(counter);
    expect(counter.open_exchanges).toBe(0);
  });
});

describe('JsonBody (the POST body path as one object per request)', () => {
  class Seen extends JsonBody {
    objects: Record<string, unknown>[] = [];
    protected jsonObject(value: Record<string, unknown>): void {
      this.objects.push(value);
      if (value.boom === true) throw new Error('route bug');
    }
  }
  function open(limit: number, declared?: string) {
    const res = new AnswerableResponse();
    const reply = new Reply(res as unknown as HttpResponse);
    const body = new Seen(reply, limit);
    body.read(declared);
    return { res, reply, body };
  }

  it('hands the parsed object over, from one chunk or several, and answers malformed and oversized bodies', () => {
    const one = open(100, '7');
    one.res.push(Buffer.from('{"a":1}'), true);
    expect(one.body.objects).toEqual([{ a: 1 }]);
    expect(one.res.ended).toBeNull(); // the route answers, not the body path
    const two = open(100);
    two.res.push(Buffer.from('{"a":'), false);
    two.res.push(Buffer.from('"x"}'), true);
    expect(two.body.objects).toEqual([{ a: 'x' }]);
    const bad = open(100);
    bad.res.push(Buffer.from('[1]'), true);
    expect(bad.body.objects).toEqual([]);
    expect(JSON.parse(bad.res.ended!)).toMatchObject({ ok: false, error: 'INVALID_REQUEST', message: 'body must be a JSON object' });
    const big = open(4, '5');
    expect(big.res.data).toBeUndefined(); // refused from Content-Length, nothing read
    expect(JSON.parse(big.res.ended!)).toMatchObject({ ok: false, error: 'INVALID_REQUEST', message: 'body too large: the limit is 4 bytes' });
    const reported: string[] = [];
    setRouteErrorReporter((err) => reported.push(err instanceof Error ? err.message : String(err)));
    const thrown = open(100);
    thrown.res.push(Buffer.from('{"boom":true}'), true);
    expect(JSON.parse(thrown.res.ended!)).toMatchObject({ ok: false, error: 'INTERNAL_ERROR' });
    expect(reported).toEqual(['route bug']);
  });

  it('an abort mid-body reaches the Reply, then the reader, once: nothing parsed, nothing written', () => {
    const { res, reply, body } = open(100, '10');
    res.push(Buffer.from('{"a":'), false);
    res.aborted!();
    expect(reply.aborted).toBe(true);
    res.push(Buffer.from('1}'), true); // uWS sends nothing after an abort; a late chunk is ignored anyway
    expect(body.objects).toEqual([]);
    expect(res.ended).toBeNull();
  });
});
