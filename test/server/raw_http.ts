// Raw TCP exchanges with a real server (net.connect to loopback): exact bytes out, every byte
// back, and whether and when the server closed. For framing cases no HTTP client would send.
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from './harness.js';

export interface RawResult {
  /** Everything the server sent, latin1. */
  text: string;
  /** True when the server closed (FIN or reset) within the wait. */
  closed: boolean;
  /** Milliseconds from connect to the close (or to the end of the wait). */
  ms: number;
}

/**
 * Connects, writes `chunks` (strings are latin1), waits up to `wait_ms` for the server to close;
 * `done(text)` may end the wait early once the expected answer is in.
 */
export function rawExchange(port: number, chunks: (string | Buffer)[], wait_ms: number, done?: (text: string) => boolean): Promise<RawResult> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const t0 = Date.now();
    let text = '';
    let settled = false;
    const finish = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ text, closed, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => finish(false), wait_ms);
    s.on('data', (d) => {
      text += d.toString('latin1');
      if (done !== undefined && done(text)) finish(false);
    });
    s.on('error', () => finish(true));
    s.on('close', () => finish(true));
    for (const c of chunks) s.write(typeof c === 'string' ? Buffer.from(c, 'latin1') : c);
  });
}

export interface ParsedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits pipelined HTTP/1.1 responses framed by Content-Length (HEAD: `head_at` lists which carry none). */
export function parseResponses(text: string, head_at: ReadonlySet<number> = new Set()): ParsedResponse[] {
  const out: ParsedResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) throw new Error(`incomplete response head at ${at}: ${JSON.stringify(text.slice(at, at + 80))}`);
    const lines = text.slice(at, end).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3}) /.exec(lines[0]);
    if (m === null) throw new Error(`not a status line: ${JSON.stringify(lines[0])}`);
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const c = l.indexOf(':');
      headers[l.slice(0, c).toLowerCase()] = l.slice(c + 1).trim();
    }
    const length = head_at.has(out.length) ? 0 : Number(headers['content-length'] ?? 0);
    if (end + 4 + length > text.length) throw new Error(`incomplete body at ${end + 4}`);
    out.push({ status: Number(m[1]), headers, body: text.slice(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return out;
}

/** True once `text` holds `n` complete responses (Content-Length framed, no HEAD). */
export function hasResponses(text: string, n: number): boolean {
  try {
    return parseResponses(text).length >= n;
  } catch {
    return false;
  }
}

export interface DocumentedRoute {
  method: string;
  /** The path with sample values for its parameters. */
  path: string;
}

const SAMPLE_PARAMS: Record<string, string> = {
  market_id: 'ETH-USDC', address: '0x' + '11'.repeat(20), client_order_id: 'c1', id: '1', entry_id: '1',
};

/** Every operation of docs/openapi.yaml, with sample path parameters: "every route" for the tests. */
export function documentedRoutes(): DocumentedRoute[] {
  const spec = parse(fs.readFileSync(path.join(REPO_ROOT, 'docs', 'openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  const out: DocumentedRoute[] = [];
  for (const [template, item] of Object.entries(spec.paths)) {
    const p = template.replace(/\{(\w+)\}/g, (_, name: string) => SAMPLE_PARAMS[name] ?? 'x');
    for (const method of Object.keys(item)) {
      if (['get', 'post', 'put', 'delete'].includes(method)) out.push({ method: method.toUpperCase(), path: p });
    }
  }
  return out;
}
