// The browser's crc32.ts (src/web/bundle.ts swaps it in; pages have no zlib): the classic
// byte-at-a-time table of the reflected IEEE polynomial 0xEDB88320, as zlib computes it.
const TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c;
}
const utf8 = new TextEncoder();

/** CRC-32 of the UTF-8 bytes of `text`, unsigned (0 to 2^32 - 1). */
export function crc32Text(text: string): number {
  const bytes = utf8.encode(text);
  let c = -1;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
