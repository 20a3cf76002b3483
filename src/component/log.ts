/**
 * Structured logs: one JSON object per line on stderr, with a level, so a platform's log
 * pipeline can read them without a parser of ours. stdout stays free for commands' output.
 */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type LogFields = Record<string, unknown>;

export interface Logger {
  readonly level: LogLevel;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger whose every line also carries `fields` (such as `component`). */
  child(fields: LogFields): Logger;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function plain(v: unknown): unknown {
  if (v instanceof Error) return { name: v.name, message: v.message };
  if (typeof v === 'bigint') return v.toString();
  return v;
}

export class JsonLogger implements Logger {
  constructor(
    readonly level: LogLevel = 'info',
    private readonly write: (line: string) => void = (l) => process.stderr.write(l + '\n'),
    private readonly base: LogFields = {},
  ) {}

  debug(msg: string, fields?: LogFields): void {
    this.emit('debug', msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.emit('info', msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.emit('warn', msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.emit('error', msg, fields);
  }

  child(fields: LogFields): Logger {
    return new JsonLogger(this.level, this.write, { ...this.base, ...fields });
  }

  private emit(level: LogLevel, msg: string, fields?: LogFields): void {
    if (RANK[level] < RANK[this.level]) return;
    const rec: LogFields = { ts: new Date().toISOString(), level, msg, ...this.base };
    if (fields) for (const [k, v] of Object.entries(fields)) rec[k] = plain(v);
    let line: string;
    try {
      line = JSON.stringify(rec, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    } catch {
      line = JSON.stringify({ ts: rec.ts, level, msg, note: 'fields could not be serialized' });
    }
    this.write(line);
  }
}

/** Drops everything; for code paths that take a logger but have no one to tell. */
export const silentLogger: Logger = {
  level: 'error',
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
