// Which of loadgen's socket backends (native-bench/loadgen.c --io) this machine can run, for the
// tests that run each: epoll always; io_uring when the kernel gives it (not under a seccomp filter
// or io_uring_disabled, not before Linux 5.19). A test of io_uring on a machine that refuses it is
// SKIPPED with the refusal in its title (never run on epoll instead and passed: that would say
// io_uring works when nothing ran on it); loadgen_io.test.ts shows the probe and the fallback
// under a refusal made on purpose.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { LOADGEN_BINARY, runLoadgen } from '../../bench/load/native_generator.js';

export type LoadgenIo = 'io_uring' | 'epoll';

/** native-bench/loadgen_deny_uring: runs a command with io_uring_setup refused (EPERM or ENOSYS), as a sandbox does. */
export const DENY_URING_BINARY = path.join(path.dirname(LOADGEN_BINARY), 'loadgen_deny_uring');

/** What the kernel said to loadgen's io_uring setup: null when it gave the ring, else loadgen's reason. */
export interface IoUringProbe {
  refused: string | null;
}

/**
 * Asks loadgen itself (the steps a run takes: io_uring_setup, the rings' mmaps, the provided
 * buffer ring), not a guess from the kernel version: `--io io_uring` sets the ring up before it
 * connects and exits naming the refused step and errno when the kernel says no; against port 1
 * (nothing listens) a ring that came up ends at the connect instead. `deny` runs it under
 * loadgen_deny_uring, to see a refusal on a machine that gives io_uring.
 */
export async function probeIoUring(deny?: 'EPERM' | 'ENOSYS'): Promise<IoUringProbe> {
  const args = ['--target', '127.0.0.1:1', '--repeat-get', '/', '--connections', '1', '--io', 'io_uring'];
  try {
    if (deny === undefined) await runLoadgen(args, 10_000);
    else await runLoadgen([deny, LOADGEN_BINARY, ...args], 10_000, DENY_URING_BINARY);
  } catch (e) {
    const msg = (e as Error).message;
    if (/connect to port 1/.test(msg)) return { refused: null };
    const m = /--io io_uring: (.*)$/m.exec(msg);
    if (m !== null) return { refused: m[1].trim() };
    throw e;
  }
  throw new Error('loadgen ran against 127.0.0.1:1');
}

/** A backend to test, and why it is skipped here (null: it runs). */
export interface LoadgenIoCase {
  io: LoadgenIo;
  skip: string | null;
}

/** Both backends, io_uring with the probe's refusal as its reason to skip (epoll always runs). */
export function ioCasesOf(probe: IoUringProbe): LoadgenIoCase[] {
  const { refused } = probe;
  return [
    { io: 'io_uring', skip: refused === null ? null : `SKIPPED: this kernel refuses io_uring to loadgen (${refused})` },
    { io: 'epoll', skip: null },
  ];
}

/** The cases on this machine: io_uring first, then epoll. */
export async function loadgenIoCases(): Promise<LoadgenIoCase[]> {
  return ioCasesOf(await probeIoUring());
}

/** A test's title with its reason to skip appended, so the report says why it did not run. */
export function titled(title: string, c: LoadgenIoCase): string {
  return c.skip === null ? title : `${title} [${c.skip}]`;
}

/**
 * A loopback HTTP/1.1 server for the generator's tests: hands each complete request head (GET, no
 * body) to `onHead` with its socket; `close` ends its connections too.
 */
export async function headServer(onHead: (head: string, sock: net.Socket) => void): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.setNoDelay(true);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => undefined);
    let buf = '';
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => {
      buf += d;
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const head = buf.slice(0, end);
        buf = buf.slice(end + 4);
        onHead(head, sock);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/**
 * A test file's scratch dir for loadgen's request and record files: made before its tests (once
 * the binary is known to be built: a missing one fails the file, never skips it), removed after.
 * Call at the file's top level; the returned getter gives the dir inside tests.
 */
export function loadgenScratchDir(prefix: string): () => string {
  let dir = '';
  beforeAll(() => {
    if (!existsSync(LOADGEN_BINARY)) throw new Error(`${LOADGEN_BINARY} is missing: build it with \`make native\``);
    dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}
