import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createHash } from 'node:crypto';
import { labRun, readRequestLog } from '../helpers/lab.js';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles, recordsOf, type LandedFile } from '../helpers/root.js';
import type { SdRecord } from '../../src/formats/session-data/types.js';

afterAll(cleanupTemp);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/**
 * The ground truth for "every source line becomes exactly one landed record": for each source
 * file, its lines (offset, size, digest) must equal the landed records of that source, in order.
 */
function expectEveryLineOnce(projects: string, files: LandedFile[]): number {
  let checked = 0;
  const bySrc = new Map<string, SdRecord[]>();
  for (const f of files) (bySrc.get(f.header.src) ?? bySrc.set(f.header.src, []).get(f.header.src)!).push(...f.records);
  for (const [src, recs] of bySrc) {
    const bytes = readFileSync(join(projects, src));
    if (src.endsWith('.meta.json')) {
      expect(recs).toHaveLength(1);
      continue;
    }
    const lines: { off: number; len: number }[] = [];
    for (let off = 0; off < bytes.length;) {
      const nl = bytes.indexOf(10, off);
      if (nl < 0) break;
      lines.push({ off, len: nl - off });
      off = nl + 1;
    }
    expect(recs.map((r) => r.ord)).toEqual(lines.map((_, i) => i + 1));
    for (const [i, r] of recs.entries()) {
      const l = lines[i]!;
      expect([r.off, r.bytes]).toEqual([l.off, l.len]);
      expect(r.sha).toBe(
        createHash('sha256')
          .update(bytes.subarray(l.off, l.off + l.len))
          .digest('hex')
          .slice(0, 12),
      );
      checked++;
    }
  }
  return checked;
}

describe('end to end with the real Claude Code CLI', () => {
  const base = tempDir('aszcol-e2e-');
  const home = join(base, 'home');
  const work = join(base, 'work');
  const projects = join(home, 'projects');
  const root = join(base, 'data');
  const log = join(base, 'requests.jsonl');
  let config = '';
  let parallel = '';
  let delegate = '';

  beforeAll(() => {
    config = writeConfig(base, root, projects);
  });

  const collect = async () => {
    const r = await runCli(['collect', '--once', '--config', config, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as { landedRecords: number; landedFiles: number };
  };
  const verify = async () => {
    const v = await runCli(['verify', '--config', config, '--json']);
    expect(v.code).toBe(0);
    return JSON.parse(v.stdout) as { problems: string[]; relanded: number; records: number };
  };

  test('PARALLEL: one call in several fragments, two Bash runs; every line lands once; the call ids and usage match the API log', async () => {
    parallel = (await labRun({ configDir: home, cwd: work, prompt: 'PARALLEL please', tools: 'Bash', log })).session_id;
    const first = await collect();
    expect(first.landedRecords).toBeGreaterThan(10);
    expect((await collect()).landedRecords).toBe(0); // a second collect lands nothing
    const files = landedFiles(root, parallel);
    expect(expectEveryLineOnce(projects, files)).toBe(first.landedRecords);
    const recs = recordsOf(files);
    // Ground truth: every answered request is a provider call in the transcript, with the usage the runtime was told.
    for (const req of readRequestLog(log)) {
      const fragments = recs.filter((r) => r.call === req.message_id);
      expect(fragments.length).toBeGreaterThan(0);
      const finished = fragments.filter((r) => r.flags?.includes('finished'));
      expect(finished.length).toBeGreaterThan(0);
      expect(finished[finished.length - 1]!.usage).toEqual(req.usage);
      const calls = fragments.flatMap((r) => r.parts.filter((p) => p.k === 'call').map((p) => p.id));
      expect(calls).toEqual(req.tools.map((t) => t.id));
      for (const t of req.tools) {
        const result = recs.flatMap((r) => r.parts).find((p) => p.k === 'result' && p.of === t.id);
        expect(result).toMatchObject({ state: 'available', text: expect.any(String) });
      }
    }
    // The thinking block was signature-only: reasoning unavailable, the signature listed as dropped.
    const thinking = recs.find((r) => r.parts.some((p) => p.k === 'reasoning'))!;
    expect(thinking.parts[0]).toMatchObject({ k: 'reasoning', state: 'unavailable' });
    expect(thinking.dropped).toEqual(expect.arrayContaining([expect.objectContaining({ what: 'reasoning signature' })]));
    // 2.1.328's own record types land faithfully as data.
    const dataTypes = new Set(
      recs
        .flatMap((r) => r.parts)
        .filter((p) => p.k === 'data')
        .map((p) => (p.data as { type?: string }).type),
    );
    for (const t of ['api-request', 'queue-operation', 'last-prompt']) expect(dataTypes).toContain(t);
    expect((await verify()).problems).toEqual([]);
  });

  test('DELEGATE: a child stream and its sidecar land flat beside main, joined by the launch result', async () => {
    delegate = (await labRun({ configDir: home, cwd: work, prompt: 'DELEGATE now', tools: 'Bash,Agent', log })).session_id;
    const got = await collect();
    const files = landedFiles(root, delegate);
    expect(expectEveryLineOnce(projects, files)).toBe(got.landedRecords - 1); // all but the sidecar's one record are lines
    const streams = new Set(files.map((f) => f.header.stream));
    expect(streams.size).toBe(2);
    const child = [...streams].find((s) => s !== 'main')!;
    expect(child).toMatch(/^a[0-9a-f]{16}$/);
    const meta = files.find((f) => f.header.kind === 'agent_meta')!;
    expect(meta.records[0]).toMatchObject({ from: 'runtime', child, label: 'helper task' });
    const launch = recordsOf(files, (h) => h.stream === 'main').find((r) => r.child === child)!;
    expect(launch.flags).toContain('launch_ack');
    expect(meta.records[0]!.tool).toBe(launch.tool ?? launch.parts.find((p) => p.k === 'result')!.of);
    const note = recordsOf(files, (h) => h.stream === 'main').find((r) => r.trigger === 'notification');
    expect(note).toBeDefined();
    expect((await verify()).problems).toEqual([]);
  });

  test('a resumed session appends to the same file; only the new lines land, as a new file', async () => {
    const before = landedFiles(root, parallel).length;
    await labRun({ configDir: home, cwd: work, prompt: 'and one more thing', resume: parallel, log });
    const got = await collect();
    expect(got.landedRecords).toBeGreaterThan(0);
    const files = landedFiles(root, parallel);
    expect(files.length).toBe(before + 1);
    expect(files.map((f) => f.seq)).toEqual(files.map((_, i) => i + 1));
    expect(expectEveryLineOnce(projects, files)).toBe(recordsOf(files).length);
  });

  test('/compact: the boundary carries continues, the summary is flagged, every line lands once', async () => {
    await labRun({ configDir: home, cwd: work, prompt: '/compact', resume: parallel, log });
    await collect();
    const files = landedFiles(root, parallel);
    expect(expectEveryLineOnce(projects, files)).toBe(recordsOf(files).length);
    const recs = recordsOf(files);
    const boundary = recs.find((r) => r.flags?.includes('context_reset'))!;
    expect(boundary).toBeDefined();
    expect(boundary.continues).toMatch(/[0-9a-f-]{36}/);
    expect(recs.some((r) => r.id === boundary.continues)).toBe(true);
    const summary = recs.find((r) => r.flags?.includes('reset_summary'))!;
    expect(summary.parent).toBe(boundary.id);
    const v = await verify();
    expect(v).toMatchObject({ problems: [], relanded: 0 });
    expect((await collect()).landedRecords).toBe(0);
    // Every source file in the projects tree that discovery should read was landed.
    const sources = walk(projects)
      .filter((p) => /\.jsonl$|\.meta\.json$/.test(p))
      .map((p) => relative(projects, p).split('\\').join('/'));
    const landedSrc = new Set([...landedFiles(root, parallel), ...landedFiles(root, delegate)].map((f) => f.header.src));
    for (const s of sources) expect(landedSrc).toContain(s);
  });
});
