// The head of every HTTP answer on the wire (http_reply.ts writes the status line, X-Request-Id and
// Content-Type in one uWS call, from the request's number): the exact bytes, the id matching the
// form A body's, ids distinct and rising, and the extra headers (Retry-After) after the head.
import { describe, expect, it } from 'vitest';
import type { StartedServer } from './harness.js';
import { serverPerFile } from './per_file.js';
import { rawExchange } from './raw_http.js';

let s: StartedServer;
serverPerFile((started) => {
  s = started;
}, { config: { rate_limits: { gets_per_ip: 2 } } });

/** The id's counter (after the server's 12-hex prefix and '-'), as a number (base 36). */
function idNumber(id: string): number {
  return parseInt(id.slice(13), 36);
}

const HEAD = /^HTTP\/1\.1 (\d{3} [A-Za-z ]+)\r\nX-Request-Id: ([0-9a-f]{12}-[0-9a-z]+)\r\nContent-Type: application\/json\r\n/;

describe('reply head bytes', () => {
  it('200, 400 and 404: status line, X-Request-Id, Content-Type, in that order; the body repeats the id', async () => {
    const body = '{"user":"0x0000000000000000000000000000000000000001"}';
    const r = await rawExchange(s.port, [
      'GET /time HTTP/1.1\r\nHost: x\r\n\r\n',
    ], 3000, (t) => t.includes('"time_ms"'));
    const ok = HEAD.exec(r.text);
    expect(ok?.[1]).toBe('200 OK');
    const bad = await rawExchange(s.port, [`POST /orders HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`], 3000, (t) => t.endsWith('"}'));
    const b = HEAD.exec(bad.text);
    expect(b?.[1]).toBe('400 Bad Request');
    expect(bad.text).toContain(`"request_id":"${b?.[2]}"`);
    const missing = await rawExchange(s.port, ['GET /no-such-route HTTP/1.1\r\nHost: x\r\n\r\n'], 3000, (t) => t.endsWith('"}'));
    const m = HEAD.exec(missing.text);
    expect(m?.[1]).toBe('404 Not Found');
    expect(missing.text).toContain(`"request_id":"${m?.[2]}"`);
    // One counter: later requests have higher numbers.
    expect(b?.[2].slice(0, 13)).toBe(ok?.[2].slice(0, 13)); // one prefix per process
    expect(idNumber(b?.[2] ?? '')).toBeGreaterThan(idNumber(ok?.[2] ?? ''));
    expect(idNumber(m?.[2] ?? '')).toBeGreaterThan(idNumber(b?.[2] ?? ''));
  });

  it('a HEAD answer has the same head; a 429 carries Retry-After after it', async () => {
    const head = await rawExchange(s.port, ['HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n'], 1500, (t) => t.includes('\r\n\r\n'));
    expect(HEAD.exec(head.text)?.[1]).toBe('200 OK');
    const texts: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await rawExchange(s.port, ['GET /markets HTTP/1.1\r\nHost: x\r\n\r\n'], 3000, (t) => t.includes('\r\n\r\n') && (t.endsWith('}') || t.endsWith(']')));
      texts.push(r.text);
    }
    const limited = texts.find((t) => t.startsWith('HTTP/1.1 429'));
    expect(limited).toBeDefined();
    expect(HEAD.exec(limited ?? '')?.[1]).toBe('429 Too Many Requests');
    expect(limited).toMatch(/\r\nContent-Type: application\/json\r\nRetry-After: \d+\r\n/);
  });
});
