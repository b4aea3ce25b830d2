// What native-bench/loadgen.c's --io chooses, as native-bench/README.md ("I/O") says: auto is
// io_uring at max rate when the kernel gives it, epoll when the kernel refuses it (io_fallback
// names the step and errno) and epoll at a fixed rate (io_fallback says so); io_uring fails rather
// than fall back; epoll is epoll. The refusal is made on purpose (native-bench/loadgen_deny_uring:
// a seccomp filter refusing io_uring_setup with EPERM, as a container's profile does, or ENOSYS,
// as a kernel without io_uring does), so the fallback runs here on any machine, and the probe that
// decides whether the io_uring tests run (loadgen_io.ts) is shown to see such a refusal and name it
// in the skipped tests' titles.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOADGEN_BINARY, runLoadgen, type NativeReport } from '../../bench/load/native_generator.js';
import { DENY_URING_BINARY, headServer, ioCasesOf, loadgenIoCases, probeIoUring, titled } from './loadgen_io.js';

const RUN_TIMEOUT_MS = 30_000;
const REQUESTS = 10;
const ERRNO_TEXT = { EPERM: 'Operation not permitted', ENOSYS: 'Function not implemented' } as const;

let server: { port: number; close: () => Promise<void> };
let port: number;

beforeAll(async () => {
  for (const b of [LOADGEN_BINARY, DENY_URING_BINARY]) if (!existsSync(b)) throw new Error(`${b} is missing: build it with \`make native\``);
  // Answers every GET with a 200 (keep-alive), whatever its path.
  server = await headServer((_head, sock) => sock.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}', 'latin1'));
  port = server.port;
});

afterAll(async () => {
  await server.close();
});

/** Closed mode (max rate), exactly REQUESTS requests over 2 connections, optionally with io_uring_setup refused. */
function closedRun(io: string | null, deny?: 'EPERM' | 'ENOSYS', extra: string[] = []): Promise<NativeReport> {
  const args = ['--target', `127.0.0.1:${port}`, '--repeat-get', '/x', '--connections', '2', '--until-empty', '--max-requests', String(REQUESTS), ...extra];
  if (io !== null) args.push('--io', io);
  return deny === undefined ? runLoadgen(args, RUN_TIMEOUT_MS) : runLoadgen([deny, LOADGEN_BINARY, ...args], RUN_TIMEOUT_MS, DENY_URING_BINARY);
}

function answeredAll(rep: NativeReport): void {
  expect([rep.requests_sent, rep.responses, rep.status_2xx]).toEqual([REQUESTS, REQUESTS, REQUESTS]);
  expect([rep.unanswered, rep.socket_errors, rep.protocol_errors, rep.connections_closed]).toEqual([0, 0, 0, 0]);
}

describe.each(['EPERM', 'ENOSYS'] as const)('loadgen where the kernel refuses io_uring_setup (%s)', (deny) => {
  const refused = `io_uring_setup: ${ERRNO_TEXT[deny]}`;

  it('the tests\' probe sees the refusal, and the io_uring tests are skipped with it in their titles, epoll\'s not', async () => {
    const probe = await probeIoUring(deny);
    expect(probe.refused).toBe(refused);
    const cases = ioCasesOf(probe);
    expect(cases.map((c) => c.io)).toEqual(['io_uring', 'epoll']);
    expect(cases[0].skip).toBe(`SKIPPED: this kernel refuses io_uring to loadgen (${refused})`);
    expect(titled('t', cases[0])).toBe(`t [SKIPPED: this kernel refuses io_uring to loadgen (${refused})]`);
    expect(cases[1].skip).toBeNull();
    expect(titled('t', cases[1])).toBe('t');
  });

  it('--io auto (the default) at max rate falls back to epoll and names the refused step and errno', async () => {
    for (const io of [null, 'auto']) {
      const rep = await closedRun(io, deny);
      expect(rep.generator_io).toBe('epoll');
      expect(rep.io_fallback).toBe(refused);
      expect(rep.io_uring_enters).toBeUndefined();
      answeredAll(rep);
    }
  });

  it('--io io_uring fails, naming the step, rather than fall back; --io epoll runs and claims no fallback', async () => {
    await expect(closedRun('io_uring', deny)).rejects.toThrow(`loadgen exited with 2: loadgen: --io io_uring: ${refused}`);
    const rep = await closedRun('epoll', deny);
    expect(rep.generator_io).toBe('epoll');
    expect(rep.io_fallback).toBeUndefined();
    answeredAll(rep);
  });
});

const IO_CASES = await loadgenIoCases();
const URING = IO_CASES[0];

describe('loadgen --io where the kernel gives what it gives', () => {
  it('--io auto at a fixed rate is epoll and says it is the mode, not the kernel', async () => {
    const rep = await runLoadgen(['--target', `127.0.0.1:${port}`, '--repeat-get', '/x', '--connections', '1', '--mode', 'open', '--rate', '100', '--duration-ms', '100'], RUN_TIMEOUT_MS);
    expect(rep.generator_io).toBe('epoll');
    expect(rep.io_fallback).toBe('open mode (auto keeps epoll at a fixed rate)');
    expect(rep.responses).toBe(10);
  });

  it('--recv-buffers: a power of two from 1 to 8192, with --io io_uring only (an auto that fell back would drop it unseen)', async () => {
    await expect(closedRun('io_uring', undefined, ['--recv-buffers', '3'])).rejects.toThrow(/--recv-buffers must be a power of two/);
    await expect(closedRun('io_uring', undefined, ['--recv-buffers', '0'])).rejects.toThrow(/--recv-buffers must be a number in \[1, 8192\]/);
    await expect(closedRun('io_uring', undefined, ['--recv-buffers', '16384'])).rejects.toThrow(/--recv-buffers must be a number in \[1, 8192\]/);
    for (const io of [null, 'auto', 'epoll']) {
      await expect(closedRun(io, undefined, ['--recv-buffers', '2'])).rejects.toThrow(/--recv-buffers goes with --io io_uring only/);
    }
  });

  it('the probe answers for this machine: a refusal names the step, else io_uring is tested (never epoll in its place)', async () => {
    const [uring, epoll] = IO_CASES;
    expect(epoll).toEqual({ io: 'epoll', skip: null });
    if (uring.skip !== null) expect(uring.skip).toMatch(/^SKIPPED: this kernel refuses io_uring to loadgen \((io_uring_setup|io_uring features|mmap of the|provided buffer ring).*\)$/);
    else expect(uring).toEqual({ io: 'io_uring', skip: null });
  });
});

describe.skipIf(URING.skip !== null)(titled('loadgen --io where the kernel gives io_uring', URING), () => {
  it('--io auto (the default) at max rate is io_uring, with no fallback named; --recv-buffers sets the provided buffers', async () => {
    for (const io of [null, 'auto', 'io_uring']) {
      const rep = await closedRun(io);
      expect(rep.generator_io).toBe('io_uring');
      expect(rep.io_fallback).toBeUndefined();
      expect(rep.io_uring_recv_buffers).toBe(64); // 2 per lane, at least 64
      answeredAll(rep);
    }
    const few = await closedRun('io_uring', undefined, ['--recv-buffers', '4']);
    expect(few.io_uring_recv_buffers).toBe(4);
    answeredAll(few);
  });
});
