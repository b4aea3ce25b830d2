// The verify pool's workers (verify_pool.ts routes the checks): the Piscina threads, one lane
// (ring, verify_lane.ts) each, and their life: started at once, each lane's worker replaced when
// it dies after it served, the pool broken for good when one ends before it ever served (a broken
// build), and stopped on close. The tasks a dead lane held, and those waiting for room when the
// pool breaks, are the pool's to fail (WorkerTasks).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { RecoverBackendName } from './recover.js';
import type { NativeFutex } from '../util/futex.js';
import { Lane, type Task } from './verify_lane.js';
import { VR_CLAIM_FRONT, VR_DONE, VR_READY, type VerifyWorkerData } from './verify_ring.js';
import { componentLog } from '../util/log.js';
import { placeNewThreads } from '../util/thread_placement.js';

const log = componentLog('verify');

/** What the workers ask of the pool whose tasks they run. */
export interface WorkerTasks {
  /** A task no worker will answer (its lane died, or the pool broke): it fails with `err`. */
  fail(task: Task, err: Error): void;
  /** The pool broke: the tasks waiting for room in a ring fail with `err`. */
  failWaiting(err: Error): void;
  /** A new worker serves a dead one's ring: tasks waiting for room may go in. */
  laneRestarted(): void;
}

export class VerifyWorkers {
  /** One per thread; a dead lane's place is taken by its replacement's. */
  readonly lanes: Lane[] = [];
  readonly #ringBytes: number;
  readonly #piscina: Piscina<VerifyWorkerData, number>;
  readonly #backend: RecoverBackendName | undefined;
  readonly #tasks: WorkerTasks;
  /** How each lane's worker sleeps and tells the front (verify_lane.ts): the pool's choice. */
  readonly #futex: NativeFutex | null;
  readonly #bell_id: number;
  #closed = false;
  #broken: Error | null = null;
  #brokenAtMs: number | null = null;
  /** Workers that died after serving and were replaced (their lanes restarted). */
  #restarts = 0;

  constructor(
    threads: number, ringBytes: number, file: string | URL, backend: RecoverBackendName | undefined, tasks: WorkerTasks,
    futex: NativeFutex | null = null, bell_id = 0,
  ) {
    this.#ringBytes = ringBytes;
    this.#futex = futex;
    this.#bell_id = bell_id;
    this.#tasks = tasks;
    const url = typeof file === 'string' && !file.startsWith('file:') ? null : new URL(file);
    const path = url === null ? (file as string) : fileURLToPath(url);
    if (!existsSync(path)) {
      throw new Error(`verify worker not found at ${path}: compile first (npx tsc -p tsconfig.json)`);
    }
    // One long task per thread: threads = tasks, and no idle timeout.
    this.#piscina = new Piscina<VerifyWorkerData, number>({
      filename: url === null ? path : url.href,
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: 1,
      idleTimeout: Infinity,
    });
    // Piscina emits 'error' for a worker that fails holding no task of it. At the start, one that
    // fails while loading (a broken build) does so after its lane's task was rejected (#laneEnded
    // broke the pool already). A replacement started after a worker died (Piscina's own restart)
    // fails so too, and then Piscina starts no thread any more (it gives up on workers that fail
    // while loading) and keeps the new lane's task queued for ever: the pool breaks here, else
    // that ring's tasks waited for a worker that never comes (answered only by the front's
    // stealing, or never with stealing off). Unheard, the event is an uncaught exception that
    // ended the process before the server could say why (test/server/start_verify_workers.test.ts).
    this.#piscina.on('error', (err: unknown) => {
      if (this.#closed || this.#broken !== null) return;
      const e = err instanceof Error ? err : new Error(String(err));
      if (this.lanes.some((lane) => !lane.ready)) this.#break(new Error(`a verify worker could not start (${e.message})`, { cause: e }));
      else log.error('ringbook: verify worker failed outside a task', e);
    });
    // threads.pipeline_cpu: a worker Piscina starts after the server's start runs on the front's
    // CPU (it inherits its creator's) until placed; see #laneEnded for the usual case, this for
    // any other (placeNewThreads does nothing before the placement starts or when it is off).
    this.#piscina.on('workerCreate', () => placeNewThreads());
    this.#backend = backend;
    for (let i = 0; i < threads; i++) this.lanes.push(this.#startLane(i));
  }

  #startLane(index: number): Lane {
    const lane = new Lane(this.#ringBytes, this.#piscina, this.#backend, this.#futex, this.#bell_id);
    lane.serving.then(
      () => this.#laneEnded(index, lane, new Error('verify worker stopped serving its ring')),
      (err: unknown) => this.#laneEnded(index, lane, err instanceof Error ? err : new Error(String(err))),
    );
    return lane;
  }

  /**
   * A worker that dies takes its unanswered batches with it: they reject (the gateway answers
   * 503 OVERLOADED: nothing was applied) and a fresh ring is served by the thread Piscina starts
   * in its place (counted: workerRestarts). A ring whose worker died before it ever served (a
   * broken build) breaks the pool instead of restarting forever. After close() the tasks end
   * normally and nothing restarts.
   */
  #laneEnded(index: number, lane: Lane, err: Error): void {
    this.#killLane(lane, err);
    if (this.#closed || this.#broken !== null) return;
    if (!lane.ready) {
      this.#break(new Error(`a verify worker ended before it served (${err.message})`, { cause: err }));
      return;
    }
    log.error('ringbook: verify worker died; its unanswered checks fail, a new worker takes its ring', err,
      { worker_restarts: this.#restarts + 1 });
    this.#restarts++;
    this.lanes[index] = this.#startLane(index);
    // Piscina started the replacement thread on the old one's exit, before it failed the task that
    // brought us here: placed now (threads.pipeline_cpu), before its boot, not at the next timed
    // sweep. 'workerCreate' sweeps again once it is ready.
    placeNewThreads();
    this.#tasks.laneRestarted();
  }

  /** No more tasks for `lane`; its unanswered ones fail with `err` (the front's own are answered). */
  #killLane(lane: Lane, err: Error): void {
    lane.dead = true;
    for (const t of lane.outstanding.splice(0)) if (t.claim !== VR_CLAIM_FRONT) this.#tasks.fail(t, err);
    Atomics.notify(lane.i32, VR_DONE); // releases the front's waitAsync on the dead ring (a bell's sleep needs nothing)
    Atomics.notify(lane.i32, VR_READY); // and ready()'s, when it died before serving
  }

  /**
   * The pool refuses every check from now on (until the process restarts): the waiting tasks and
   * those in rings no worker serves fail with `err`; rings whose workers serve answer theirs.
   */
  #break(err: Error): void {
    this.#broken = err;
    this.#brokenAtMs = Date.now();
    log.error('ringbook: the verify pool is broken: every signature check fails (signed requests are answered 503 OVERLOADED, ' +
      'GET /health 503) until the server restarts with a build whose verify worker loads', err);
    this.#tasks.failWaiting(err);
    for (const lane of this.lanes) if (!lane.ready && !lane.dead) this.#killLane(lane, err);
  }

  /** Why the pool refuses work (VerifyPool.broken); null while it works. */
  get broken(): Error | null {
    return this.#broken;
  }

  /** When the pool broke (epoch ms), or null. */
  get brokenAtMs(): number | null {
    return this.#brokenAtMs;
  }

  get restarts(): number {
    return this.#restarts;
  }

  /** Whether close() has begun (the pool takes no more checks; a lane that ends is not replaced). */
  get closed(): boolean {
    return this.#closed;
  }

  /** The first step of the pool's close(): from now on no lane is replaced and no error breaks the pool. */
  beginClose(): void {
    this.#closed = true;
  }

  /** The last step of the pool's close(), once its tasks are answered: the rings close and the threads stop. */
  async stop(): Promise<void> {
    for (const lane of this.lanes) lane.close();
    // force: a lane's task still queued without a thread (its replacement could not load: the
    // pool broke) is refused, not waited for; the running ones end as their rings close.
    const closed = this.#piscina.close({ force: true });
    await Promise.allSettled(this.lanes.map((lane) => lane.serving));
    await closed;
  }
}
