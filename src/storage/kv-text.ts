/** The plain-text state format: one `key value` per line, keys padded for reading. */
export function formatKv(entries: [string, string | number | bigint | undefined][]): string {
  const width = Math.max(...entries.map(([k]) => k.length)) + 2;
  return (
    entries
      .filter(([, v]) => v !== undefined && v !== '')
      .map(([k, v]) => `${k.padEnd(width)}${String(v)}`)
      .join('\n') + '\n'
  );
}

export function parseKv(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (!line) continue;
    const m = /^(\S+)\s+(.*)$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
    else out.set(line, '');
  }
  return out;
}
