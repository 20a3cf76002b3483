import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The first line of a file (a landed file's or a round's header), read in small pieces without
 * reading the rest; undefined when the file ends, or passes `max` bytes, before a newline. Throws
 * when the file cannot be opened.
 */
export function readFirstLine(path: string, max = 1 << 20): string | undefined {
  const fd = openSync(path, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.alloc(4096);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, total);
      if (n === 0) return undefined;
      const nl = buf.subarray(0, n).indexOf(10);
      if (nl >= 0) {
        chunks.push(Buffer.from(buf.subarray(0, nl)));
        return Buffer.concat(chunks).toString('utf8');
      }
      chunks.push(Buffer.from(buf.subarray(0, n)));
      total += n;
      if (total > max) return undefined;
    }
  } finally {
    closeSync(fd);
  }
}

/** The first line parsed as JSON (a landed file's header); undefined when it cannot be read or parsed. */
export function readFirstJsonLine(path: string, max = 1 << 20): unknown {
  try {
    const line = readFirstLine(path, max);
    return line === undefined ? undefined : JSON.parse(line);
  } catch {
    return undefined;
  }
}
