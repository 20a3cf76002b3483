/**
 * Issue 19's skips never hide new data. A collect pass with nothing new passes over sessions by
 * their cursors (on the main thread, no worker started) and a parse with nothing new answers a
 * session from its settled stamp (a stat of its directories): after either, a line appended,
 * a source touched without growing, a sidecar rewritten at the same size, a transcript replaced
 * by a longer copy and one cut short are each still collected, parsed or reported.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const sid = (i: number) => `0438c73b-5555-4666-8777-${String(i).padStart(12, '0')}`;
const AGENT = 'a0123456789abcdef';

interface Pass {
  sessions: number;
  sources: number;
  landedRecords: number;
  conflicts: number;
  errors: unknown[];
}
interface Row {
  session: string;
  status: string;
  throughSeq: number;
  summary: { talks: number };
}

async function collect(config: string): Promise<{ code: number; pass: Pass }> {
  const r = await runCli(['collect', '--once', '--json', '--config', config]);
  return { code: r.code, pass: JSON.parse(r.stdout.trim().split('\n').pop()!) as Pass };
}

async function parse(config: string): Promise<Map<string, Row>> {
  const p = await runCli(['parse', '--json', '--config', config]);
  expect(p.stderr).toBe('');
  expect(p.code).toBe(0);
  return new Map((JSON.parse(p.stdout) as Row[]).map((r) => [r.session, r]));
}

/**
 * Sets every directory under `dir` back in time, so the next parse may trust their times and stamp
 * the sessions (a real root gets there by waiting). Each call goes to a different second, as time does.
 */
function age(dir: string, secondsAgo: number): void {
  const t = Date.now() / 1000 - secondsAgo;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    utimesSync(d, t, t);
  };
  walk(dir);
}

const statuses = (m: Map<string, Row>) => Object.fromEntries([...m].map(([k, v]) => [k, v.status]));
const stamped = (root: string) =>
  Object.keys((JSON.parse(readFileSync(join(root, '_conversations', 'settled.stamps'), 'utf8')) as { sessions: object }).sessions).sort();

describe('collect and parse with nothing new, then something new', () => {
  test('every change after a no-change pass is collected and parsed, or reported', async () => {
    const base = tempDir('aszcol-no-change-');
    const root = join(base, 'data');
    const src = join(base, 'projects');
    const config = writeConfig(base, root, src);
    const main = (i: number) => join(src, '-p', `${sid(i)}.jsonl`);
    const sidecar = join(src, '-p', sid(1), 'subagents', `agent-${AGENT}.meta.json`);
    for (const i of [0, 1, 2]) writeLines(main(i), [rec.user(sid(i), `first ${i}`)]);
    writeLines(join(src, '-p', sid(1), 'subagents', `agent-${AGENT}.jsonl`), [rec.user(sid(1), 'a helper', { isSidechain: true, agentId: AGENT })]);
    writeFileSync(sidecar, JSON.stringify({ agentType: 'general-purpose', description: 'one' }));

    const first = await collect(config);
    expect(first).toMatchObject({ code: 0, pass: { sessions: 3, sources: 5, landedRecords: 5, conflicts: 0 } });
    expect(Object.values(statuses(await parse(config)))).toEqual(['written', 'written', 'written']);

    // Nothing new: the pass looks at every source and lands nothing; the parse stamps every session, then answers from the stamps.
    age(root, 3600);
    expect(await collect(config)).toMatchObject({ code: 0, pass: { sessions: 3, sources: 5, landedRecords: 0, errors: [] } });
    expect(Object.values(statuses(await parse(config)))).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(stamped(root)).toEqual([sid(0), sid(1), sid(2)]);
    const settled = await parse(config);
    expect(Object.values(statuses(settled))).toEqual(['unchanged', 'unchanged', 'unchanged']);

    // One line appended to session 0: collected, and parsed although its stamp was there.
    writeLines(main(0), [rec.user(sid(0), 'second 0')], { append: true });
    expect((await collect(config)).pass).toMatchObject({ landedRecords: 1, conflicts: 0 });
    let p = await parse(config);
    expect(statuses(p)).toEqual({ [sid(0)]: 'written', [sid(1)]: 'unchanged', [sid(2)]: 'unchanged' });
    expect(p.get(sid(0))!.throughSeq).toBeGreaterThan(settled.get(sid(0))!.throughSeq);
    expect(p.get(sid(0))!.summary.talks).toBe(2);

    // Session 1's transcript touched without growing: nothing to land and nothing reported. Then a line appended: collected and parsed.
    age(root, 3000);
    await parse(config); // stamps session 0 again
    const later = Date.now() / 1000 + 5;
    utimesSync(main(1), later, later);
    expect(await collect(config)).toMatchObject({ code: 0, pass: { landedRecords: 0, conflicts: 0, errors: [] } });
    expect(statuses(await parse(config))).toEqual({ [sid(0)]: 'unchanged', [sid(1)]: 'unchanged', [sid(2)]: 'unchanged' });
    writeLines(main(1), [rec.user(sid(1), 'second 1')], { append: true });
    expect((await collect(config)).pass).toMatchObject({ landedRecords: 1, conflicts: 0 });
    p = await parse(config);
    expect(p.get(sid(1))).toMatchObject({ status: 'written', summary: { talks: settled.get(sid(1))!.summary.talks + 1 } });

    // Session 1's sidecar rewritten at the same size (a new description): a new version lands, and the parse takes it.
    age(root, 2400);
    await parse(config);
    const before = statSync(sidecar).size;
    writeFileSync(sidecar, JSON.stringify({ agentType: 'general-purpose', description: 'two' }));
    expect(statSync(sidecar).size).toBe(before);
    expect((await collect(config)).pass).toMatchObject({ landedRecords: 1, conflicts: 0 });
    expect((await parse(config)).get(sid(1))!.status).toBe('written');

    // Session 2's transcript replaced by a longer copy (a new file renamed over it): the new line lands.
    age(root, 1800);
    await parse(config);
    const copy = `${main(2)}.new`;
    writeFileSync(copy, readFileSync(main(2)));
    writeLines(copy, [rec.user(sid(2), 'second 2')], { append: true });
    renameSync(copy, main(2));
    expect((await collect(config)).pass).toMatchObject({ landedRecords: 1, conflicts: 0 });
    expect((await parse(config)).get(sid(2))).toMatchObject({ status: 'written', summary: { talks: 2 } });

    // Session 0's transcript cut short: not skipped as unchanged but reported as a conflict, on every pass.
    truncateSync(main(0), 10);
    const cut = await collect(config);
    expect(cut).toMatchObject({ code: 1, pass: { landedRecords: 0, conflicts: 1 } });
    expect((await collect(config)).pass.conflicts).toBe(1);
  }, 180_000);
});

describe('a first parse of many sessions', () => {
  test('spread over threads, it gives each session the chain a parse of that session alone gives, in session order', async () => {
    const base = tempDir('aszcol-parse-threads-');
    const src = join(base, 'projects');
    const n = 20; // above the count from which the parse uses threads
    for (let i = 0; i < n; i++)
      writeLines(join(src, `-p${i % 3}`, `${sid(100 + i)}.jsonl`), [rec.user(sid(100 + i), `prompt ${i}`), rec.user(sid(100 + i), `more ${i}`)]);
    // One collect, copied: both roots hold the same landed bytes, so their chains must match to the digest.
    const roots = ['all', 'each'].map((name) => {
      const dir = join(base, name);
      mkdirSync(dir);
      return { root: join(dir, 'data'), config: writeConfig(dir, join(dir, 'data'), src) };
    });
    expect((await collect(roots[0]!.config)).pass).toMatchObject({ sessions: n, landedRecords: 2 * n });
    cpSync(roots[0]!.root, roots[1]!.root, { recursive: true });

    const all = await runCli(['parse', '--json', '--config', roots[0]!.config]);
    expect(all.code).toBe(0);
    const rows = JSON.parse(all.stdout) as (Row & { headDigest: string })[];
    expect(rows.map((r) => r.session)).toEqual(Array.from({ length: n }, (_, i) => sid(100 + i)).sort());
    for (const r of rows) {
      const one = await runCli(['parse', r.session, '--json', '--config', roots[1]!.config]);
      expect(one.code).toBe(0);
      const [alone] = JSON.parse(one.stdout) as (Row & { headDigest: string })[];
      expect(r).toMatchObject({ status: 'written', headDigest: alone!.headDigest, summary: alone!.summary });
    }
  }, 300_000);
});
