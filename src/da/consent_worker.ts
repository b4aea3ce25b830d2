// A ConsentPool worker (consent_pool.ts): hash || signature (97 bytes) per job in, the recovered
// 20-byte signer per job out (zeros for an invalid signature). Native secp256k1 when it loads.
import { parentPort } from 'node:worker_threads';
import { createRecoverer } from '../auth/recover.js';

const recoverer = createRecoverer();
const port = parentPort;
if (port === null) throw new Error('consent_worker runs in a worker thread');
port.on('message', (input: Uint8Array) => {
  const n = input.length / 97;
  const out = new Uint8Array(n * 20);
  for (let i = 0; i < n; i++) {
    const hash = input.subarray(i * 97, i * 97 + 32);
    const sig = input.subarray(i * 97 + 32, i * 97 + 97);
    if (!recoverer.recoverAddressInto(hash, sig, out.subarray(i * 20, i * 20 + 20))) out.fill(0, i * 20, i * 20 + 20);
  }
  port.postMessage(out, [out.buffer as ArrayBuffer]);
});
