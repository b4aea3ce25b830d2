// Reading an HTTP answer's body with a bound on its length: the one reader of every fetch client
// that talks to a server it need not trust (the JSON-RPC client, `ringbook verify`'s DA fetches,
// `ringbook withdraw-onchain`'s signature fetch). A server streaming a body without end must not
// grow this process's memory: the read stops at the bound and the connection is cancelled there.
// Time is bounded by the caller's fetch signal (AbortSignal.timeout), which also ends a body read.

/** An answer longer than the reader's bound; names the URL (Response.url) and the bound. */
export class AnswerTooLargeError extends Error {
  constructor(readonly url: string, readonly bytes_max: number) {
    super(`the answer of ${url} is longer than ${bytes_max} bytes; not read further`);
  }
}

/**
 * The answer's body as text, at most `bytes_max` bytes: a longer one (by its Content-Length, or as
 * it streams) is cancelled there and throws `tooLarge()` (default AnswerTooLargeError).
 */
export async function readAnswer(
  res: Response, bytes_max: number, tooLarge: () => Error = () => new AnswerTooLargeError(res.url, bytes_max),
): Promise<string> {
  if (res.body === null) return '';
  if (Number(res.headers.get('content-length') ?? 0) > bytes_max) {
    await res.body.cancel();
    throw tooLarge();
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > bytes_max) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Whether `e` is a fetch's AbortSignal.timeout firing (before the answer, or while its body streamed). */
export function isTimeout(e: unknown): boolean {
  return (e as { name?: unknown } | null)?.name === 'TimeoutError';
}
