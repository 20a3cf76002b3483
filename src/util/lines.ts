import { closeSync, openSync, readSync } from 'node:fs';

/**
 * Reads a file line by line with no limit on a line's length (a fixed line buffer stops at
 * the first long line; records of 4.6 MB exist). Memory is one chunk plus the longest line.
 * Yields each line without its newline, the byte offset it starts at, and whether it ended
 * with a newline (only the last line of a file can lack one).
 */
export function* readLines(path: string, chunkSize = 1 << 20): Generator<{ line: Buffer; off: number; terminated: boolean }> {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(chunkSize);
    let pending: Buffer[] = [];
    let pendingLen = 0;
    let lineStart = 0;
    let pos = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, chunkSize, pos);
      if (n === 0) break;
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf(10, from);
        if (nl === -1 || nl >= n) break;
        const piece = chunk.subarray(from, nl);
        const line = pendingLen ? Buffer.concat([...pending, piece], pendingLen + piece.length) : Buffer.from(piece);
        yield { line, off: lineStart, terminated: true };
        pending = [];
        pendingLen = 0;
        lineStart = pos + nl + 1;
        from = nl + 1;
      }
      if (from < n) {
        pending.push(Buffer.from(chunk.subarray(from, n)));
        pendingLen += n - from;
      }
      pos += n;
    }
    if (pendingLen) yield { line: Buffer.concat(pending, pendingLen), off: lineStart, terminated: false };
  } finally {
    closeSync(fd);
  }
}
