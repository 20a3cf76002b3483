/**
 * A session landed for the first time takes a shorter path (issue 19): under its lock its
 * directory holds only the lock, so nothing is swept, no cursor is checked for a pruned source and
 * the index is built from what was landed, not listed back. The ground truth is the full path,
 * forced by a session directory that already holds something (an empty `metrics/`): with the same
 * clock both roots must hold the same files, byte for byte — landed files, cursors, index,
 * the counter in sources.cursor. A later pass that appends to a session goes down the full path and extends that index.
 * A parse reads an index that covers every landed file without the session's lock, and only such a one.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LocalCollector } from '../../src/receivers/claude-code-local/pass.js';
import { INDEX_SCHEMA, indexIfCurrent, readIndexState, updateIndex } from '../../src/storage/index.js';
import { parseSession } from '../../src/processors/assembler/parse.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const sid = (i: number) => `5a1e0c3d-1111-4222-8333-${String(i).padStart(12, '0')}`;
const agent = (i: number) => `a${String(i).padStart(16, '0')}`;
const SESSIONS = 8;

/** Sessions in two projects; every other one has a helper's transcript and its sidecar (a snapshot source). */
function writeHistory(src: string): void {
  for (let i = 0; i < SESSIONS; i++) {
    const s = sid(i);
    const project = join(src, `-home-me-p${i % 2}`);
    writeLines(
      join(project, `${s}.jsonl`),
      Array.from({ length: 5 }, (_, j) => rec.user(s, `prompt ${j} of session ${i}: é 🧪`)),
    );
    if (i % 2 === 0) {
      writeLines(join(project, s, 'subagents', `agent-${agent(i)}.jsonl`), [rec.user(s, 'helper task', { isSidechain: true, agentId: agent(i) })]);
      writeLines(join(project, s, 'subagents', `agent-${agent(i)}.meta.json`), [{ agentType: 'general-purpose', description: 'helper' }]);
    }
  }
}

/** Every regular file under `root`, by its path relative to it, with its bytes; not the root's landing epoch, which is a fresh token on every landing. */
function filesUnder(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory() && relative(root, join(d, e.name)) === join('_conversations', '.landing')) continue;
      if (e.isDirectory()) walk(join(d, e.name));
      else out.set(relative(root, join(d, e.name)), readFileSync(join(d, e.name)));
    }
  };
  walk(root);
  return out;
}

const clock = () => 1_764_633_600_123_456_789n;
const collect = (root: string, src: string) =>
  new LocalCollector({ root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 1 << 20, clock }).pass();

/** The history written and collected once into a new root. */
function collectedHistory(prefix: string): { src: string; root: string } {
  const base = tempDir(prefix);
  const src = join(base, 'projects');
  const root = join(base, 'data');
  writeHistory(src);
  expect(collect(root, src).errors).toEqual([]);
  return { src, root };
}

describe('a session landed for the first time', () => {
  test('lands the same bytes as the full path: files, cursors (the counter in their head) and index', () => {
    const base = tempDir('aszcol-new-session-');
    const src = join(base, 'projects');
    writeHistory(src);
    const fresh = join(base, 'fresh');
    const full = join(base, 'full');
    // Something already in each session's directory sends every session down the full path.
    for (let i = 0; i < SESSIONS; i++) mkdirSync(join(full, sid(i), 'metrics'), { recursive: true });

    const a = collect(fresh, src);
    const b = collect(full, src);
    expect(a.errors).toEqual([]);
    expect(b.errors).toEqual([]);
    expect(a.landedFiles).toBe(SESSIONS + SESSIONS); // each main transcript, each helper's transcript and sidecar
    expect(b.landedFiles).toBe(a.landedFiles);

    const got = filesUnder(fresh);
    const want = filesUnder(full);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [rel, bytes] of want) expect({ rel, same: got.get(rel)?.equals(bytes) }).toEqual({ rel, same: true });
    expect([...got.keys()].filter((p) => p.endsWith('entries.bin'))).toHaveLength(SESSIONS);
  });

  test('its index is the one its landed files give, and a later pass extends it', () => {
    const { src, root } = collectedHistory('aszcol-new-session-index-');
    const s = sid(1);
    writeLines(join(src, '-home-me-p1', `${s}.jsonl`), [rec.user(s, 'one more')], { append: true });
    const again = collect(root, src);
    expect(again.errors).toEqual([]);
    expect(again.landedFiles).toBe(1);
    for (let i = 0; i < SESSIONS; i++) {
      const dir = join(root, sid(i), 'index');
      const written = readFileSync(join(dir, 'entries.bin'));
      rmSync(dir, { recursive: true });
      expect(updateIndex(root, sid(i)).problems).toEqual([]);
      expect(readFileSync(join(dir, 'entries.bin')).equals(written)).toBe(true);
      expect(readdirSync(dir)).toEqual(['entries.bin']);
    }
    expect(readIndexState(root, s)).toEqual({ schema: INDEX_SCHEMA, indexedSeq: 2 });
  });

  test('a parse reads an index that covers every landed file as it is, and brings one a file lies beyond up to date', () => {
    const { src, root } = collectedHistory('aszcol-current-index-');
    const s = sid(3);
    const indexFile = join(root, s, 'index', 'entries.bin');
    const afterFirst = readFileSync(indexFile);
    expect(indexIfCurrent(root, s)?.indexedSeq).toBe(1);

    writeLines(join(src, '-home-me-p1', `${s}.jsonl`), [rec.user(s, 'one more')], { append: true });
    expect(collect(root, src).landedFiles).toBe(1);
    const current = readFileSync(indexFile);
    expect(indexIfCurrent(root, s)?.indexedSeq).toBe(2);
    // The first pass's index put back: file 2 lies beyond it, so it is not current and a parse must extend it.
    writeFileSync(indexFile, afterFirst);
    expect(indexIfCurrent(root, s)).toBeUndefined();
    const parsed = parseSession({ root, session: s, maxRoundBytes: 1 << 30 });
    expect(parsed.status).toBe('written');
    expect(parsed.throughSeq).toBe(2);
    expect(readFileSync(indexFile).equals(current)).toBe(true);
    expect(indexIfCurrent(root, s)?.indexedSeq).toBe(2);
  });
});
