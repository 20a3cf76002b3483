import { afterAll, describe, expect, test } from '@jest/globals';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CHECK_AT } from '../../src/scenario/check.js';
import { generate } from '../../src/scenario/generate.js';
import { parseScenario } from '../../src/scenario/model.js';
import { ScenarioRoot } from '../../src/scenario/run.js';
import { chainDir, listRounds } from '../../src/storage/chain.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { PushState } from '../../src/storage/push-state.js';
import { markerPath, readMarker, type RemovalPolicy } from '../../src/storage/scenario-marker.js';
import { removeSentScenarioSessions } from '../../src/storage/scenario-removal.js';
import { readSpool } from '../../src/storage/hook-spool.js';
import { runCli } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const ENDPOINT = 'http://127.0.0.1:4318';
const SCENARIO = {
  steps: [
    { input: 'fix it' },
    { call: { text: 'Fixing.', tool: { name: 'Bash', input: { command: 'make' }, result: 'ok' } } },
    { call: { agent: { name: 'helper', prompt: 'check it', steps: [{ call: { text: 'Fine.' } }], notify: true } } },
    { call: { workflow: { name: 'verify', children: [{ name: 'lint', prompt: 'lint', steps: [{ call: { text: 'clean' } }] }] } } },
    { call: { text: 'Done.' } },
  ],
};

/** A finished claude-code root: built (with its marker), collected and parsed. */
function built(remove?: RemovalPolicy) {
  const scn = parseScenario(SCENARIO, 'removal');
  const root = new ScenarioRoot(join(tempDir(), 'root'), 'claude-code', scn, CHECK_AT, { remove });
  root.build();
  root.parse();
  const g = generate(scn, { at: CHECK_AT });
  return { dir: root.dir, session: g.session, end: g.end, state: new PushState(root.dir) };
}

/** Every landed file and round of the session, recorded as sent, as a clean push records them. */
function recordAllSent(r: ReturnType<typeof built>, endpoint = ENDPOINT): string[] {
  const rels = [...listLanded(r.dir, r.session).map((l) => l.rel), ...listRounds(r.dir, r.session).map((x) => relative(r.dir, x.path))];
  r.state.record(
    endpoint,
    rels.map((rel) => ({ rel, digest: '0'.repeat(64) })),
  );
  return rels;
}

const sourceFiles = (dir: string) => readdirSync(join(dir, '_source', 'projects'), { recursive: true }).map(String);
const pass = (r: ReturnType<typeof built>, nowMs = CHECK_AT + 3_600_000) =>
  removeSentScenarioSessions({ root: r.dir, state: r.state, endpoint: ENDPOINT, nowMs, waitForMetrics: false });

describe('a scenario session goes once all of it is sent', () => {
  test('the marker lists every file the build wrote, with its size and digest, and the policy', () => {
    const r = built();
    const m = readMarker(markerPath(r.dir, r.session));
    expect(m.policy).toBe('immediately');
    expect(m.last_record).toBe(new Date(r.end).toISOString());
    const written = sourceFiles(r.dir).filter((p) => p.endsWith('.jsonl') || p.endsWith('.json') || p.endsWith('.js'));
    expect(m.files.map((f) => f.path).sort()).toEqual(written.map((p) => `projects/${p}`).sort());
    for (const f of m.files) expect(readFileSync(join(r.dir, '_source', f.path)).length).toBe(f.size);
  });

  test('nothing is removed before a push, nor while one file is unsent', () => {
    const r = built();
    expect(pass(r)).toEqual({ removed: [], kept: [] });
    const rels = recordAllSent(r);
    r.state.forgetFiles(new Set([rels[0]!]));
    expect(pass(r).removed).toEqual([]);
    expect(existsSync(join(r.dir, r.session))).toBe(true);
  });

  test('after a clean push, immediately removes the sources, the landed files, the chain, the push.state lines and the marker', () => {
    const r = built();
    recordAllSent(r);
    expect(pass(r)).toEqual({ removed: [r.session], kept: [] });
    expect(existsSync(join(r.dir, r.session))).toBe(false);
    expect(existsSync(chainDir(r.dir, r.session))).toBe(false);
    expect(existsSync(markerPath(r.dir, r.session))).toBe(false);
    expect(sourceFiles(r.dir)).toEqual([]);
    expect(r.state.sent(ENDPOINT).size).toBe(0);
    // And a second pass has nothing left to do.
    expect(pass(r)).toEqual({ removed: [], kept: [] });
  });

  test('a partial success keeps the session with the receiver words; another receiver in push.state keeps every session', () => {
    const r = built();
    const rels = recordAllSent(r);
    r.state.record(ENDPOINT, [{ rel: rels[0]!, digest: '0'.repeat(64) }], { reason: 'digest mismatch', files: [rels[0]!] });
    expect(pass(r).kept).toEqual([{ session: r.session, reason: expect.stringContaining('digest mismatch') }]);

    const o = built();
    recordAllSent(o);
    recordAllSent(o, 'grpc://10.0.0.1:11800');
    const held = pass(o);
    expect(held.removed).toEqual([]);
    expect(held.held).toContain('grpc://10.0.0.1:11800');
  });

  test('a file the build wrote that changed, or a marker that is gone, keeps the session', () => {
    const r = built();
    recordAllSent(r);
    const main = sourceFiles(r.dir).find((p) => p.endsWith(`${r.session}.jsonl`))!;
    appendFileSync(join(r.dir, '_source', 'projects', main), '\n');
    expect(pass(r).kept).toEqual([{ session: r.session, reason: expect.stringContaining('has changed') }]);

    const o = built();
    recordAllSent(o);
    rmSync(markerPath(o.dir, o.session));
    expect(pass(o)).toEqual({ removed: [], kept: [] });
    expect(existsSync(join(o.dir, o.session))).toBe(true);
  });

  test('a retention of 24h keeps the session one second before its last record is 24h old, and removes it at that moment', () => {
    const r = built({ afterMs: 86_400_000 });
    recordAllSent(r);
    expect(pass(r, r.end + 86_400_000 - 1000).removed).toEqual([]);
    expect(pass(r, r.end + 86_400_000).removed).toEqual([r.session]);
  });

  test("the runtime's body dump of the session, its lines of the shared index, and the plugin's observations go too; another session's stay, and derived metrics are left to spool retention", () => {
    const doc = {
      provider_bodies: true,
      steps: [
        { input: 'status?' },
        { call: { tool: { id: 'm1', name: 'mcp__status__get', input: {}, result: 'up', execution: { server: 'status', source: 'user' } } } },
        { call: { text: 'It is up.' } },
      ],
    };
    const scn = parseScenario(doc, 'removal-bodies');
    const root = new ScenarioRoot(join(tempDir(), 'root'), 'claude-code', scn, CHECK_AT);
    root.build();
    root.parse();
    const r = { dir: root.dir, session: generate(scn, { at: CHECK_AT }).session, end: 0, state: new PushState(root.dir) };
    const dump = join(r.dir, '_source', 'asz', 'provider-bodies');
    const bodies = readdirSync(dump).filter((n) => n !== 'index.jsonl');
    expect(bodies.length).toBeGreaterThan(0);
    expect(readMarker(markerPath(r.dir, r.session)).files.filter((f) => f.path.startsWith('asz/provider-bodies/'))).toHaveLength(bodies.length);
    // Another session's call in the shared index, and derived metrics of both sessions, all sent.
    const other = JSON.stringify({ session_id: 'another-session', request_id: 'req_other', message_id: 'msg_other' });
    appendFileSync(join(dump, 'index.jsonl'), other + '\n');
    mkdirSync(join(r.dir, '_metrics'), { recursive: true });
    const mine = `_metrics/metrics-20260101T000000.000000000Z-000001-${r.session}-derived.pb`;
    const theirs = '_metrics/metrics-20260101T000000.000000000Z-000002-another-session-derived.pb';
    for (const f of [mine, theirs]) writeFileSync(join(r.dir, f), 'x');
    recordAllSent(r);
    r.state.record(
      ENDPOINT,
      [mine, theirs].map((rel) => ({ rel, digest: '0'.repeat(64) })),
    );
    expect(readSpool(r.dir, r.session).length).toBeGreaterThan(0);

    expect(pass(r).removed).toEqual([r.session]);
    expect(readdirSync(dump)).toEqual(['index.jsonl']);
    expect(readFileSync(join(dump, 'index.jsonl'), 'utf8')).toBe(other + '\n');
    expect(readSpool(r.dir, r.session)).toEqual([]);
    // Another consumer of the spool (a prometheus exporter) may not have read them: retention removes them, knowing every consumer.
    expect(existsSync(join(r.dir, mine))).toBe(true);
    expect(existsSync(join(r.dir, theirs))).toBe(true);
    expect([...r.state.sent(ENDPOINT).keys()].sort()).toEqual([mine, theirs].sort());
  });

  test('an sd build is never marked', () => {
    const scn = parseScenario(SCENARIO, 'removal');
    const root = new ScenarioRoot(join(tempDir(), 'root'), 'sd', scn, CHECK_AT);
    root.build();
    expect(existsSync(markerPath(root.dir, generate(scn, { at: CHECK_AT }).session))).toBe(false);
  });
});

describe('scenario build --remove', () => {
  test('takes immediately or a duration, writes it into the marker, and is refused with --format sd', async () => {
    const out = tempDir();
    const file = join(out, 'one.yaml');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, 'steps:\n  - input: hi\n  - call: {text: hello}\n');
    const ok = await runCli(['scenario', 'build', file, '--out', join(out, 'a'), '--at', '2026-06-01T09:00:00Z', '--remove', '7d']);
    expect(ok.code).toBe(0);
    const markers = readdirSync(join(out, 'a', '_source', '.asz-scenario'));
    expect(markers).toHaveLength(1);
    expect(readMarker(join(out, 'a', '_source', '.asz-scenario', markers[0]!)).policy).toEqual({ afterMs: 7 * 86_400_000 });
    const sd = await runCli(['scenario', 'build', file, '--format', 'sd', '--out', join(out, 'b'), '--remove', '24h']);
    expect(sd.code).not.toBe(0);
    expect(sd.stderr).toContain('--remove is for --format claude-code only');
    const bad = await runCli(['scenario', 'build', file, '--out', join(out, 'c'), '--remove', 'soon']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--remove');
  });
});
