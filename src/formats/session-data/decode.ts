import { createHash } from 'node:crypto';
import { readLines } from '../../util/lines.js';
import { SessionDataError } from '../../util/errors.js';
import { checkHeader } from './encode.js';
import type { Closing, Header, SdRecord } from './types.js';

export interface ReadResult {
  header: Header;
  records: SdRecord[];
  closing: Closing;
}

/**
 * Reads a landed file and refuses it unless the header is well formed, the closing line is
 * present, and its count and digest match what precedes it. A file cut short must never read
 * as a shorter conversation.
 */
export function readSessionData(path: string, opts: { keepRecords?: boolean } = {}): ReadResult {
  const keep = opts.keepRecords ?? true;
  const hash = createHash('sha256');
  let header: Header | undefined;
  let closing: Closing | undefined;
  const records: SdRecord[] = [];
  let count = 0;
  let lineNo = 0;
  for (const { line, terminated } of readLines(path)) {
    lineNo++;
    if (closing) throw new SessionDataError(path, lineNo, 'content after the closing line');
    if (!terminated) throw new SessionDataError(path, lineNo, 'the last line has no newline: the file was cut short');
    let value: unknown;
    try {
      value = JSON.parse(line.toString('utf8'));
    } catch {
      throw new SessionDataError(path, lineNo, 'line is not valid JSON');
    }
    if (lineNo === 1) {
      const problem = typeof value === 'object' && value !== null ? checkHeader(value as Partial<Header>) : 'the header is not a JSON object';
      if (problem) throw new SessionDataError(path, 1, problem);
      header = value as Header;
      hash.update(line).update('\n');
      continue;
    }
    if (typeof value === 'object' && value !== null && (value as { t?: unknown }).t === 'end') {
      closing = value as Closing;
      continue;
    }
    if (typeof value !== 'object' || value === null || typeof (value as SdRecord).ord !== 'number') {
      throw new SessionDataError(path, lineNo, 'a record line must be an object with "ord"');
    }
    hash.update(line).update('\n');
    count++;
    if (keep) records.push(value as SdRecord);
  }
  if (!header) throw new SessionDataError(path, undefined, 'empty file: no header');
  if (!closing) throw new SessionDataError(path, undefined, 'no closing line: the file was cut short');
  if (closing.records !== count) {
    throw new SessionDataError(path, undefined, `closing line says ${closing.records} records, the file holds ${count}`);
  }
  const digest = hash.digest('hex');
  if (closing.digest !== digest) {
    throw new SessionDataError(path, undefined, `digest mismatch: closing line says ${closing.digest}, content digests to ${digest}`);
  }
  return { header, records, closing };
}

/** Reads one record by its row (1-based line after the header), still checking the whole file. */
export function readRecord(path: string, row: number): { header: Header; record: SdRecord } {
  const { header, records } = readSessionData(path);
  const record = records[row - 1];
  if (!record) throw new SessionDataError(path, undefined, `no row ${row}: the file holds ${records.length} records`);
  return { header, record };
}
