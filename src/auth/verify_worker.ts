// Piscina worker: verifies one batch task per call. Loaded from the compiled JS
// (dist/src/auth/verify_worker.js); the backend comes from workerData.backend when set.
import { workerData } from 'node:worker_threads';
import { move } from 'piscina';
import { createRecoverer, type RecoverBackendName } from './recover.js';
import { runVerifyTask, type VerifyTask } from './verify_codec.js';

function backendFrom(data: unknown): RecoverBackendName | undefined {
  if (data !== null && typeof data === 'object' && 'backend' in data) {
    const b = (data as { backend: unknown }).backend;
    if (b === 'native' || b === 'noble') return b;
  }
  return undefined;
}

const recoverer = createRecoverer({ backend: backendFrom(workerData) });

export default function verifyTask(task: VerifyTask): Uint8Array {
  // Transferred back, not cloned (the answer is this task's own buffer).
  return move(runVerifyTask(task, recoverer)) as Uint8Array;
}

