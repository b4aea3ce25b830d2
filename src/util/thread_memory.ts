// Per-thread heaps for GET /admin/memory (docs/api.md): each worker thread answers a question on a
// BroadcastChannel with its own isolate's v8.getHeapStatistics(), so the long soak can tell which
// thread holds memory (issue 20: the front's heap stayed flat while the process's anonymous RSS
// grew). A channel, not a message on each worker's own port: the workers' protocols stay as they
// are, and one line in each worker opts in. A thread whose event loop is blocked (the verify
// workers sleep in Atomics.wait by design) does not answer; the process figures (RSS, anonymous
// RSS) still cover it.
import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { BroadcastChannel, threadId } from 'node:worker_threads';

const CHANNEL = 'ringbook:thread-memory';

export interface ThreadHeap {
  thread: string;
  thread_id: number;
  heap_used_bytes: number;
  heap_total_bytes: number;
  external_bytes: number;
  /** What V8 itself allocated with malloc (not the embedder's: LMDB, uWS, Buffers are not in it). */
  malloced_bytes: number;
}

export interface ProcessMemory {
  rss_bytes: number;
  /** From /proc/self/status (Linux; null elsewhere): anonymous pages (heaps, malloc arenas). */
  rss_anon_bytes: number | null;
  /** File-backed resident pages: LMDB's mapped journal and DA store, the binary. */
  rss_file_bytes: number | null;
  threads: ThreadHeap[];
}

function heapOf(thread: string): ThreadHeap {
  const h = getHeapStatistics();
  return {
    thread, thread_id: threadId, heap_used_bytes: h.used_heap_size, heap_total_bytes: h.total_heap_size,
    external_bytes: h.external_memory, malloced_bytes: h.malloced_memory,
  };
}

/**
 * Answers question `ask` as `thread` on the channel, from a thread that does not run its event loop
 * (the matcher sleeps on its request ring and reads its port between batches: the front passes the
 * question there, see processMemory's `nudge`). Posting needs no event loop; receiving would.
 */
export function answerMemoryQuestion(thread: string, ask: number): void {
  const ch = new BroadcastChannel(CHANNEL);
  ch.postMessage({ answer: ask, heap: heapOf(thread) });
  ch.close();
}

/** In a worker thread: answer memory questions as `thread` (the channel does not keep the thread alive). */
export function answerMemoryQuestions(thread: string): void {
  const ch = new BroadcastChannel(CHANNEL);
  ch.unref();
  ch.onmessage = (ev: unknown) => {
    const data = (ev as { data?: { ask?: number } }).data;
    if (data !== undefined && typeof data.ask === 'number') ch.postMessage({ answer: data.ask, heap: heapOf(thread) });
  };
}

let next_question = 1;

/**
 * The process's memory and each answering thread's heap (this thread first), within `wait_ms`.
 * `nudge` passes the question to threads that do not listen on the channel (answerMemoryQuestion).
 */
export function processMemory(wait_ms: number, nudge?: (ask: number) => void): Promise<ProcessMemory> {
  const ask = next_question++;
  const threads: ThreadHeap[] = [heapOf('front')];
  const ch = new BroadcastChannel(CHANNEL);
  ch.onmessage = (ev: unknown) => {
    const data = (ev as { data?: { answer?: number; heap?: ThreadHeap } }).data;
    if (data?.answer === ask && data.heap !== undefined) threads.push(data.heap);
  };
  ch.postMessage({ ask });
  nudge?.(ask);
  return new Promise((resolve) => {
    setTimeout(() => {
      ch.close();
      threads.sort((a, b) => a.thread_id - b.thread_id);
      resolve({ rss_bytes: process.memoryUsage.rss(), ...procStatus(), threads });
    }, wait_ms);
  });
}

function procStatus(): { rss_anon_bytes: number | null; rss_file_bytes: number | null } {
  try {
    const s = readFileSync('/proc/self/status', 'utf8');
    const kb = (k: string): number | null => {
      const m = new RegExp(`${k}:\\s+(\\d+) kB`).exec(s);
      return m ? Number(m[1]) * 1024 : null;
    };
    return { rss_anon_bytes: kb('RssAnon'), rss_file_bytes: kb('RssFile') };
  } catch {
    return { rss_anon_bytes: null, rss_file_bytes: null };
  }
}
