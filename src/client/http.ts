// The HTTP transport of RingbookClient (docs/api.md "Envelopes and errors"): one request, its
// envelope read, every failure thrown as the typed errors of errors.ts (429 with its Retry-After,
// an error envelope by its code, anything else UNEXPECTED_RESPONSE); and the path and query
// encoders the endpoint methods (rest.ts) build their URLs with.
import { errorFromCode, RateLimitedError, UnexpectedResponseError } from './errors.js';

export type FetchLike = (input: string, init?: { method?: string; headers?: Record<string, string>; body?: string }) => Promise<{
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}>;

export function enc(s: string | number): string {
  return encodeURIComponent(String(s));
}

export function query(params: Record<string, string | number | undefined | null>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) parts.push(`${enc(k)}=${enc(v)}`);
  return parts.length === 0 ? '' : '?' + parts.join('&');
}

export class HttpTransport {
  readonly base_url: string;
  readonly #fetch: FetchLike;
  readonly #admin_token: string | undefined;

  /** `base_url` without a trailing slash; `admin_token`: `X-Admin-Token` for the calls that ask for it. */
  constructor(base_url: string, fetch: FetchLike, admin_token: string | undefined) {
    this.base_url = base_url;
    this.#fetch = fetch;
    this.#admin_token = admin_token;
  }

  get has_admin_token(): boolean {
    return this.#admin_token !== undefined;
  }

  /** One request; resolves with `data` of a success envelope, throws a RingbookError otherwise. */
  async request<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, opts: { admin?: boolean } = {}): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (opts.admin) {
      if (this.#admin_token === undefined) throw new TypeError(`${method} ${path} needs admin_token`);
      headers['X-Admin-Token'] = this.#admin_token;
    }
    const res = await this.#fetch(this.base_url + path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const header_id = res.headers.get('x-request-id');
    let parsed: any = undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    if (res.status === 429) {
      const ra = Number(res.headers.get('retry-after'));
      throw new RateLimitedError({
        code: 'RATE_LIMITED',
        message: typeof parsed?.error === 'string' ? parsed.error : 'rate limited',
        status: 429,
        request_id: header_id,
        retry_after_s: Number.isFinite(ra) && ra >= 1 ? ra : 1,
      });
    }
    if (parsed && typeof parsed === 'object' && parsed.ok === true && res.status >= 200 && res.status < 300) {
      return parsed.data as T;
    }
    if (parsed && typeof parsed === 'object' && parsed.ok === false && typeof parsed.error === 'string') {
      throw errorFromCode({
        code: parsed.error,
        message: typeof parsed.message === 'string' ? parsed.message : parsed.error,
        status: res.status,
        request_id: typeof parsed.request_id === 'string' ? parsed.request_id : header_id,
      });
    }
    throw new UnexpectedResponseError({
      code: 'UNEXPECTED_RESPONSE',
      message: `unexpected ${res.status} response: ${text.slice(0, 200)}`,
      status: res.status,
      request_id: header_id,
    });
  }
}
