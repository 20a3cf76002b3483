/**
 * Where a session's index lives and what its file says about itself without being loaded. The index
 * is one file, `index/entries.bin`, whose head names how far it reaches (`indexed_seq`): reading that
 * head is how a pass or a parse asks whether the index is current. A root written before this layout
 * also holds `index/index.state`, the same facts in a second file; it is no longer read, and goes the
 * first time the session's index is written again.
 */
import { closeSync, openSync, readSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

export const INDEX_SCHEMA = 7;
/** The first four bytes of an index file: "ASZI". */
export const INDEX_MAGIC = 0x49_5a_53_41;
/** Bytes before the JSON head: the magic, the schema and the head's length, each a uint32. */
export const INDEX_PREFIX_BYTES = 12;

export const indexDir = (root: string, session: string) => join(root, session, 'index');
export const indexFilePath = (root: string, session: string) => join(indexDir(root, session), 'entries.bin');
/** The old layout's second file of the index (schema, indexed_seq, counts); see `removeLegacyIndexState`. */
export const legacyIndexStatePath = (root: string, session: string) => join(indexDir(root, session), 'index.state');

/** How far an index reaches, and in which schema it was written (a schema this build does not read means rebuild). */
export interface IndexState {
  schema: number;
  indexedSeq: number;
}

/**
 * Enough of the head to hold its first three keys whatever the session's name: entry-names.ts keeps
 * a session's name to a file name's length, and JSON escaping at most sextuples it.
 */
const HEAD_PEEK_BYTES = 4096;
/** The head's first keys, in the order the encoder writes them. */
const HEAD_START = /^\{"schema":(\d+),"session":"(?:[^"\\]|\\.)*","indexed_seq":(\d+)[,}]/;

/**
 * The index's state from the head of its file: one read of its first bytes, not a load. Undefined
 * when there is no index file or its head does not read (an index that is missing or damaged is
 * rebuilt, never trusted).
 */
export function readIndexState(root: string, session: string): IndexState | undefined {
  let fd: number;
  try {
    fd = openSync(indexFilePath(root, session), 'r');
  } catch {
    return undefined;
  }
  const buf = Buffer.allocUnsafe(HEAD_PEEK_BYTES);
  let got: number;
  try {
    got = readSync(fd, buf, 0, buf.length, 0); // a regular file gives all it has up to the length asked
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  return parseIndexHead(buf.subarray(0, got));
}

/** The state an index file's first bytes give, or undefined when they are not an index's head. */
export function parseIndexHead(bytes: Buffer): IndexState | undefined {
  if (bytes.length < INDEX_PREFIX_BYTES || bytes.readUInt32LE(0) !== INDEX_MAGIC) return undefined;
  const headLen = bytes.readUInt32LE(8);
  const m = HEAD_START.exec(bytes.toString('utf8', INDEX_PREFIX_BYTES, Math.min(bytes.length, INDEX_PREFIX_BYTES + headLen)));
  if (!m) return undefined;
  return { schema: Number(m[1]), indexedSeq: Number(m[2]) };
}

/** Removes the old layout's `index.state` once the session's index is written again (under the session's lock). */
export function removeLegacyIndexState(root: string, session: string): void {
  try {
    unlinkSync(legacyIndexStatePath(root, session));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
