// The CLI's --url check (src/cli/common.ts url()): HTTP commands take http(s) only; `ringbook
// book`, which only opens a WebSocket, also takes ws(s) (it worked with ws:// before the check).
import { describe, expect, it } from 'vitest';
import { parseArgs, SOCKET_PROTOCOLS, url, UsageError } from '../../src/cli/common.js';

describe('--url', () => {
  it('takes http(s) by default and refuses ws:// and ftp:// with the flag named', () => {
    expect(url(parseArgs(['--url', 'http://127.0.0.1:8080']))).toBe('http://127.0.0.1:8080');
    expect(() => url(parseArgs(['--url', 'ws://127.0.0.1:8080']))).toThrow(UsageError);
    expect(() => url(parseArgs(['--url', 'ftp://127.0.0.1:1']))).toThrow('--url: not an http:// or https:// URL: ftp://127.0.0.1:1');
    expect(() => url(parseArgs(['--url', 'not a url']))).toThrow('--url: not a URL');
  });

  it('takes ws(s) as well for a socket-only command, and still refuses other protocols', () => {
    expect(url(parseArgs(['--url', 'ws://127.0.0.1:8080']), SOCKET_PROTOCOLS)).toBe('ws://127.0.0.1:8080');
    expect(url(parseArgs(['--url', 'wss://127.0.0.1:8443']), SOCKET_PROTOCOLS)).toBe('wss://127.0.0.1:8443');
    expect(() => url(parseArgs(['--url', 'ftp://127.0.0.1:1']), SOCKET_PROTOCOLS)).toThrow(UsageError);
  });
});
