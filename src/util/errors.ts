/** Errors carry what they are about: a file, a line, or a configuration path. */
export class AszError extends Error {
  constructor(
    message: string,
    readonly where?: string,
  ) {
    super(where ? `${where}: ${message}` : message);
    this.name = new.target.name;
  }
}

/** A configuration value that is not allowed; `path` is like `receivers.claude_code_local.interval`. */
export class ConfigError extends AszError {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(reason, path);
  }
}

/** A landed Session Data file that does not read: bad header, record count or digest. */
export class SessionDataError extends AszError {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    reason: string,
  ) {
    super(reason, line === undefined ? file : `${file}:${line}`);
  }
}

/** Another process holds a lock we need. */
export class LockBusyError extends AszError {
  constructor(
    readonly lockPath: string,
    readonly holder: string,
  ) {
    super(`held by ${holder}`, lockPath);
  }
}
