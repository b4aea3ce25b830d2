// A ConsentPool worker (consent_pool.ts): jobs of hash || signature || expected signer (117
// bytes) in; out, only the failures: u32 job index (little-endian) || the recovered signer (20
// zero bytes for an invalid signature). Native secp256k1 when it loads.
import { parentPort } from 'node:worker_threads';
import { createRecoverer } from '../auth/recover.js';
import { answerMemoryQuestions } from '../util/thread_memory.js';

const JOB_BYTES = 117;
const FAILURE_BYTES = 24;
const recoverer = createRecoverer();
const port = parentPort;
if (port === null) throw new Error('consent_worker runs in a worker thread');
answerMemoryQuestions('consent');
const got = new Uint8Array(20);
port.on('message', (input: Uint8Array) => {
  const n = input.length / JOB_BYTES;
  const failures: number[] = [];
  const signers: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const at = i * JOB_BYTES;
    const ok = recoverer.recoverAddressInto(input.subarray(at, at + 32), input.subarray(at + 32, at + 97), got);
    if (!ok) got.fill(0);
    let same = ok;
    for (let k = 0; same && k < 20; k++) same = got[k] === input[at + 97 + k];
    if (!same) {
      failures.push(i);
      signers.push(got.slice());
    }
  }
  const out = new Uint8Array(failures.length * FAILURE_BYTES);
  const view = new DataView(out.buffer);
  failures.forEach((i, k) => {
    view.setUint32(k * FAILURE_BYTES, i, true);
    out.set(signers[k], k * FAILURE_BYTES + 4);
  });
  port.postMessage(out, [out.buffer as ArrayBuffer]);
});
