// Structured logs (pino): every line the server writes, on the front thread and in its worker
// threads, is one JSON object with `level` (a name), `time` (ISO 8601), `component` (which part
// wrote it) and `msg`, plus `request_id` when the line is about one request and `err` (message
// and stack) for failures. docs/operations.md, "Logs".
//
// Decisions:
// - info and debug go to stdout, warn and above to stderr (pino.multistream, dedupe: each line
//   once): the split the server's console.log/console.error lines had, so supervisors and tests
//   that read stderr for failures keep working.
// - Synchronous writes (pino.destination sync): a line written just before process.exit (a
//   failed matcher thread, a clean stop) is never lost. The server logs a few lines per minute
//   at info; the per-request line is debug only (`accessLogOn()`).
// - Worker threads log through their own pino instance with the same settings (passed in their
//   workerData: `LogSettings`), writing the same fds directly: no message to the front per line.
// - Human-readable with `log.pretty` (config), `RINGBOOK_LOG_PRETTY=1` or `node dist/src/main.js
//   --pretty`: pino-pretty formats the same records (synchronously, in this thread).
import { pino, type Logger, type DestinationStream, type StreamEntry } from 'pino';
import pretty from 'pino-pretty';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogSettings {
  level: LogLevel;
  pretty: boolean;
}

export const LOG_SETTINGS_DEFAULT: LogSettings = { level: 'info', pretty: false };

function stream(fd: 1 | 2, pretty_lines: boolean): DestinationStream {
  if (pretty_lines) {
    return pretty({
      destination: fd, sync: true, colorize: false, translateTime: 'SYS:standard',
      messageFormat: '[{component}] {msg}', ignore: 'pid,hostname,component',
    });
  }
  return pino.destination({ dest: fd, sync: true });
}

function makeRoot(s: LogSettings): Logger {
  const streams: StreamEntry[] = [
    { level: 'trace', stream: stream(1, s.pretty) },
    { level: 'warn', stream: stream(2, s.pretty) },
  ];
  return pino({
    level: s.level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  }, pino.multistream(streams, { dedupe: true }));
}

let settings: LogSettings = LOG_SETTINGS_DEFAULT;
let root: Logger | null = null;
/** Bumped by configureLogs: components rebuild their child logger on their next line. */
let generation = 0;

/** Sets the level and format of every logger of this thread (call once at start). */
export function configureLogs(s: LogSettings): void {
  settings = { level: s.level, pretty: s.pretty };
  root = null;
  generation++;
}

/** This thread's settings (worker threads get them in their workerData). */
export function logSettings(): LogSettings {
  return { ...settings };
}

function rootLogger(): Logger {
  if (root === null) root = makeRoot(settings);
  return root;
}

type Fields = Record<string, unknown>;

/** The logger of one component (`server`, `http`, `matcher`, `da`, ...): child loggers made lazily. */
export class ComponentLog {
  readonly component: string;
  private child: Logger | null = null;
  private child_generation = -1;

  constructor(component: string) {
    this.component = component;
  }

  private get l(): Logger {
    if (this.child === null || this.child_generation !== generation) {
      this.child = rootLogger().child({ component: this.component });
      this.child_generation = generation;
    }
    return this.child;
  }

  /** True when lines of `level` are written (guards work done only to build a line). */
  enabled(level: LogLevel): boolean {
    return this.l.isLevelEnabled(level);
  }

  info(msg: string, fields: Fields = {}): void {
    this.l.info(fields, msg);
  }

  debug(msg: string, fields: Fields = {}): void {
    this.l.debug(fields, msg);
  }

  warn(msg: string, fields: Fields = {}): void {
    this.l.warn(fields, msg);
  }

  /** A failure; `err` (an Error or anything thrown) goes in `err` with its message and stack. */
  error(msg: string, err?: unknown, fields: Fields = {}): void {
    if (err === undefined) this.l.error(fields, msg);
    else this.l.error({ ...fields, err: err instanceof Error ? err : new Error(String(err)) }, msg);
  }

  fatal(msg: string, err?: unknown, fields: Fields = {}): void {
    if (err === undefined) this.l.fatal(fields, msg);
    else this.l.fatal({ ...fields, err: err instanceof Error ? err : new Error(String(err)) }, msg);
  }
}

export function componentLog(component: string): ComponentLog {
  return new ComponentLog(component);
}

/** Parses a level name (config `log.level`, RINGBOOK_LOG_LEVEL); null when it is not one. */
export function parseLogLevel(x: unknown): LogLevel | null {
  return typeof x === 'string' && (LOG_LEVELS as readonly string[]).includes(x) ? (x as LogLevel) : null;
}
