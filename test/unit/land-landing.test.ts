/**
 * The landing orchestrator in-process (no worker thread): it lands what the journal held at start
 * — records in their session, metrics requests in the spool — moves landed.state past them and
 * says so; a session whose lock another collector holds keeps the journal from its first entry
 * and lands once the lock is free; a flush writes the state files and is answered.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LANDED_STATE, entryFrame, segmentName } from '../../src/receivers/claude-code-otlp/journal-format.js';
import { PACE_SLOTS, monotonicMs } from '../../src/receivers/claude-code-otlp/land-pace.js';
import { Landing } from '../../src/receivers/claude-code-otlp/landing/landing.js';
import type { LandProgress, WorkerMessage, WorkerRequest } from '../../src/receivers/claude-code-otlp/landing/messages.js';
import { parseKv } from '../../src/storage/kv-text.js';
import { otlpDir, sessionLockPath, sessionStatePath } from '../../src/storage/layout.js';
import { FileLock } from '../../src/storage/lock.js';
import { MetricsSpool } from '../../src/storage/metrics-spool.js';
import { ccLogsRequest, ccMetricsRequest } from '../helpers/otlp.js';
import { eventually } from '../helpers/wait.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const SESSION = '7d0c3c2a-1b4e-4c1e-8f3a-5e2b9a6d4c10';
const TOKENS = { input: 10, output: 20, cacheRead: 30, cacheCreation: 40 };

/** A journal of one segment holding a logs request and a metrics request of SESSION; gives its end. */
function journal(root: string): { dir: string; end: number; metricsAt: number } {
  const dir = join(root, '_journal', 'otlp');
  mkdirSync(dir, { recursive: true });
  const logs = ccLogsRequest(SESSION);
  const metrics = ccMetricsRequest(SESSION, TOKENS);
  const bytes = Buffer.concat([entryFrame('logs', 1n, logs), logs, entryFrame('metrics', 2n, metrics), metrics]);
  writeFileSync(join(dir, segmentName(0)), bytes);
  return { dir, end: bytes.length, metricsAt: bytes.length - metrics.length - 24 };
}

function start(root: string, journalDir: string, end: number) {
  const sent: WorkerMessage[] = [];
  const landing = new Landing(
    { root, journalDir, from: 0, to: end, lockWaitMs: 0, pace: new SharedArrayBuffer(PACE_SLOTS * 8), paceBelowBytes: 1 << 20 },
    { post: (m) => sent.push(m), nextMessage: (): WorkerRequest | undefined => undefined, clock: { monotonicMs, wallMs: Date.now } },
  );
  landing.start();
  const progress = () => sent.filter((m): m is LandProgress => m.op === 'progress');
  return { landing, sent, progress };
}

describe('the landing orchestrator', () => {
  test('lands the journal it starts with: a file in the session, a file in the spool, landed.state past both', async () => {
    const root = tempDir();
    const j = journal(root);
    const { landing, sent, progress } = start(root, j.dir, j.end);
    expect(sent[0]).toEqual({ op: 'ready', spoolBytes: 0 });
    expect(await eventually(() => progress().some((p) => p.landedThrough === j.end), 5000, 5)).toBe(true);
    const total = progress().reduce((t, p) => ({ files: t.files + p.files, records: t.records + p.records, spool: t.spool + p.spoolFiles }), {
      files: 0,
      records: 0,
      spool: 0,
    });
    expect(total).toEqual({ files: 1, records: 5, spool: 1 });
    expect(readdirSync(otlpDir(root, SESSION)).filter((n) => n.endsWith('.sd'))).toHaveLength(1);
    expect(new MetricsSpool(root).list('received').map((f) => f.name)).toEqual([expect.stringMatching(/-000001-otlp\.pb$/)]);
    expect(parseKv(readFileSync(join(j.dir, LANDED_STATE), 'utf8')).get('landed_through')).toBe(String(j.end));

    landing.onMessage({ op: 'flush', id: 7 });
    expect(sent[sent.length - 1]).toEqual({ op: 'reply', id: 7, ok: true });
    expect(parseKv(readFileSync(sessionStatePath(root, SESSION), 'utf8')).get('next_seq')).toBe('2');
    expect(parseKv(readFileSync(new MetricsSpool(root).statePath, 'utf8')).get('next_seq')).toBe('2');
  });

  test('a session locked elsewhere keeps the journal from its entry (the metrics after it land) and lands once the lock is free', async () => {
    const root = tempDir();
    const j = journal(root);
    const other = new FileLock(sessionLockPath(root, SESSION));
    expect(other.tryAcquire()).toBe(true);
    const { sent, progress } = start(root, j.dir, j.end);
    try {
      expect(await eventually(() => progress().some((p) => p.spoolFiles === 1), 5000, 5)).toBe(true);
      const p = progress()[progress().length - 1]!;
      expect(p).toMatchObject({ landedThrough: 0, waitingSessions: 1 });
      expect(existsSync(join(j.dir, LANDED_STATE))).toBe(false);
      expect(sent).toContainEqual(
        expect.objectContaining({ op: 'log', level: 'warn', msg: expect.stringContaining(`session ${SESSION} is locked by another collector`) }),
      );
    } finally {
      other.release();
    }
    // Retried on its own, backing off: no message needed.
    expect(await eventually(() => progress().some((p) => p.landedThrough === j.end && p.waitingSessions === 0), 5000, 5)).toBe(true);
    expect(progress().reduce((n, p) => n + p.records, 0)).toBe(5);
    expect(new MetricsSpool(root).list('received')).toHaveLength(1); // landed once, not again
  });
});
