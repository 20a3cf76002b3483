/**
 * The landing thread's session writer: Session Data files in the session's `otlp/` whose `seq`
 * comes from the session's counter and whose `ord`/`off` continue the kind's stream, across a
 * restart (read back from what is on disk) and across another writer's visit; a session whose
 * lock is held elsewhere gets nothing written and keeps its records for the next round.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { otlpDir, sessionLockPath, sessionStatePath } from '../../src/storage/layout.js';
import { FileLock } from '../../src/storage/lock.js';
import { parseKv } from '../../src/storage/kv-text.js';
import { NAMES_RULE_VERSION } from '../../src/storage/entry-names.js';
import { loadCursor } from '../../src/storage/cursor.js';
import { formatSessionCursors, sessionCursorsPath } from '../../src/storage/session-cursors.js';
import { Round } from '../../src/receivers/claude-code-otlp/landing/round.js';
import { SessionWriter } from '../../src/receivers/claude-code-otlp/landing/session-writer.js';
import { WaitingWork, type SessionWork } from '../../src/receivers/claude-code-otlp/landing/waiting-work.js';
import { ccLogsRequest } from '../helpers/otlp.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const SESSION = '0b5e8f0e-5a8e-4f6c-9d51-2f1d7c3a9e01';
const T0 = BigInt(Date.UTC(2026, 10, 30, 5, 14, 12)) * 1_000_000n;
const lines: string[] = [];
const log = (level: string, msg: string) => {
  lines.push(`${level}: ${msg}`);
};

/** One logs request's records (5 of them) for SESSION, as the reader would hand them over. */
function workFor(tag: string, at = 0): SessionWork {
  const w = new WaitingWork();
  w.add({
    signal: 'logs',
    receivedAtNs: T0,
    body: ccLogsRequest(SESSION, 0, Date.UTC(2026, 10, 30, 5, 14, 12), tag),
    namesRule: NAMES_RULE_VERSION,
    at,
    end: at + 1,
  });
  return w.sessions.get(SESSION)!;
}

async function land(writer: SessionWriter, work: SessionWork): Promise<boolean | undefined> {
  const round = new Round(log);
  const finish = writer.prepare(round, SESSION, work);
  if (!finish) return undefined;
  await round.land();
  return finish() === undefined;
}

function landedFiles(root: string) {
  const dir = otlpDir(root, SESSION);
  return readdirSync(dir)
    .filter((n) => n.endsWith('.sd'))
    .sort()
    .map((n) => ({ name: n, ...readSessionData(join(dir, n)) }));
}

describe('the landing session writer', () => {
  test("a first file starts the stream: seq 1, ord from 1, off from 0, each record's off after the one before", async () => {
    const root = tempDir();
    let ns = T0;
    const writer = new SessionWriter(root, log, () => (ns += 1_000_000n));
    expect(await land(writer, workFor('a'))).toBe(true);
    const [f, ...more] = landedFiles(root);
    expect(more).toEqual([]);
    expect(f!.name).toBe('otlp_log-20261130T051412.001000000Z-000001.sd');
    expect(f!.header).toMatchObject({ seq: 1, kind: 'otlp_log', session: SESSION });
    expect(f!.records.map((r) => r.ord)).toEqual([1, 2, 3, 4, 5]);
    expect(f!.records[0]!.off).toBe(0);
    for (let i = 1; i < f!.records.length; i++) expect(f!.records[i]!.off).toBe(f!.records[i - 1]!.off + f!.records[i - 1]!.bytes + 1);
    expect(existsSync(sessionLockPath(root, SESSION))).toBe(false);
  });

  test('after a restart (no state files written) seq, ord and off continue from what is on disk', async () => {
    const root = tempDir();
    let ns = T0;
    const clock = () => (ns += 1_000_000n);
    await land(new SessionWriter(root, log, clock), workFor('a'));
    expect(existsSync(sessionStatePath(root, SESSION))).toBe(false); // written lazily: not yet
    await land(new SessionWriter(root, log, clock), workFor('b')); // a new thread: nothing remembered
    const [a, b] = landedFiles(root);
    const lastA = a!.records[a!.records.length - 1]!;
    expect(b!.header).toMatchObject({ seq: 2 });
    expect(b!.records.map((r) => r.ord)).toEqual([6, 7, 8, 9, 10]);
    expect(b!.records[0]!.off).toBe(lastA.off + lastA.bytes + 1);
  });

  test("a lock's temporary file a killed writer left in the session goes at the first landing there; a live writer's stays", async () => {
    const root = tempDir();
    const dir = join(root, SESSION);
    mkdirSync(dir, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!; // a pid whose process has ended
    const leftover = join(dir, `.tmp-.lock-${dead}-0a1b2c3d`);
    const live = join(dir, `.tmp-.lock-${process.pid}-0a1b2c3d`);
    writeFileSync(leftover, `${dead} host 0123456789ab`);
    writeFileSync(live, 'mid-write');
    let ns = T0;
    expect(await land(new SessionWriter(root, log, () => (ns += 1_000_000n)), workFor('a'))).toBe(true);
    expect(existsSync(leftover)).toBe(false);
    expect(existsSync(live)).toBe(true);
  });

  test('flush writes the cursor and session.state; a counter another writer moved is taken up', async () => {
    const root = tempDir();
    let ns = T0;
    const writer = new SessionWriter(root, log, () => (ns += 1_000_000n));
    await land(writer, workFor('a'));
    writer.flush();
    const state = parseKv(readFileSync(sessionStatePath(root, SESSION), 'utf8'));
    expect(state.get('next_seq')).toBe('2');
    const [a] = landedFiles(root);
    const last = a!.records[4]!;
    expect(loadCursor(join(otlpDir(root, SESSION), 'otlp_log.cursor'))).toMatchObject({
      kind: 'append',
      ord: 5,
      offset: last.off + last.bytes + 1,
      last_seq: 1,
    });

    // Another writer landed files of its own in the session meanwhile and moved the counter.
    writeFileSync(sessionStatePath(root, SESSION), 'schema     1\nnext_seq   50\nliveness   unknown\nlast_scan  2026-11-30T05:14:12Z\n');
    await land(writer, workFor('b'));
    expect(landedFiles(root)[1]!.header).toMatchObject({ seq: 50 });
    writer.flush();
    const after = parseKv(readFileSync(sessionStatePath(root, SESSION), 'utf8'));
    expect(after.get('next_seq')).toBe('51');
    expect(after.get('last_scan')).toBe('2026-11-30T05:14:12Z'); // the local receiver's key is kept
  });

  test("a counter the local receiver moved in sources.cursor's head, not in session.state, is taken up", async () => {
    const root = tempDir();
    let ns = T0;
    const writer = new SessionWriter(root, log, () => (ns += 1_000_000n));
    await land(writer, workFor('a'));
    writer.flush();
    // A collect pass landed transcript files 2..69 between two rounds; it keeps its counter in the cursor file's head only.
    writeFileSync(sessionCursorsPath(root, SESSION), formatSessionCursors(new Map(), { nextSeq: 70 }));
    await land(writer, workFor('b'));
    expect(landedFiles(root)[1]!.header).toMatchObject({ seq: 70 });
  });

  test('a session whose lock another collector holds gets nothing written and keeps its records; they land once it is free', async () => {
    const root = tempDir();
    const writer = new SessionWriter(root, log, () => T0);
    const work = workFor('a');
    const other = new FileLock(sessionLockPath(root, SESSION));
    expect(other.tryAcquire()).toBe(true);
    try {
      expect(await land(writer, work)).toBeUndefined();
      expect(landedFiles(root)).toEqual([]);
      expect(work.records).toBe(5);
    } finally {
      other.release();
    }
    expect(await land(writer, work)).toBe(true);
    expect(landedFiles(root).map((f) => f.records.length)).toEqual([5]);
  });
});
