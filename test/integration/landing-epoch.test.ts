/**
 * Issue 19: a parse with nothing new trusts its stamps without a look at any session while the
 * root's landing epoch is the one recorded with them and no writer is landing
 * (`_conversations/.landing/`). That is only safe if every writer of a session's evidence moves the
 * epoch: one scenario per writer (a collected line, a pruned source, a provider body, the OTLP
 * landing thread's rounds and its state flush), each failing if that writer lands without moving
 * it; and a parse never records the epoch while a writer is marked, and sweeps a dead writer's mark
 * only after a new epoch.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { observeHookInput } from '../../src/adapters/claude-code/hook-event.js';
import { appendSpoolLineSync } from '../../src/storage/hook-spool.js';
import { NAMES_RULE_VERSION } from '../../src/storage/entry-names.js';
import { LandingMark, landingNow } from '../../src/storage/landing-epoch.js';
import { loadSettledStamps } from '../../src/storage/settled-stamps-read.js';
import { PARSER, POLICY } from '../../src/formats/session-flow/types.js';
import { parseAll } from '../../src/processors/assembler/parse-all.js';
import { landedSessions } from '../../src/storage/landed-files.js';
import { quickParse } from '../../src/cli/parse-quick.js';
import { Round } from '../../src/receivers/claude-code-otlp/landing/round.js';
import { SessionWriter } from '../../src/receivers/claude-code-otlp/landing/session-writer.js';
import { WaitingWork } from '../../src/receivers/claude-code-otlp/landing/waiting-work.js';
import { bodySession, writeBodies } from '../helpers/body-session.js';
import { runCli, writeConfig } from '../helpers/cli.js';
import { ccLogsRequest } from '../helpers/otlp.js';
import { settledRoot, settledSid } from '../helpers/settled-root.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const collect = async (config: string) => expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);
const parseRootNow = (root: string) => parseAll({ root, sessions: landedSessions(root), maxRoundBytes: 2 << 20 });
const recorded = (root: string) => loadSettledStamps(root, PARSER, POLICY)?.landed;

describe('every writer of a session moves the landing epoch', () => {
  test('collect: a landed line moves it, a pass with nothing new does not, and no mark stays', async () => {
    const base = tempDir('aszcol-epoch-');
    const { root, src, config } = await settledRoot(base, 2, {});
    const settled = landingNow(root);
    expect(settled.writers).toEqual([]);
    await collect(config);
    expect(landingNow(root).epoch).toBe(settled.epoch); // quiet sessions are passed over without their lock

    writeLines(join(src, '-p', `${settledSid(1)}.jsonl`), [rec.user(settledSid(1), 'one more')], { append: true });
    await collect(config);
    const after = landingNow(root);
    expect(after.epoch).not.toBe(settled.epoch);
    expect(after.writers).toEqual([]);
  });

  test('collect: a session whose sources are gone is marked pruned under a moved epoch', async () => {
    const base = tempDir('aszcol-epoch-');
    const { root, src, config } = await settledRoot(base, 2, {});
    const before = landingNow(root).epoch;
    rmSync(join(src, '-p', `${settledSid(0)}.jsonl`));
    await collect(config);
    expect(landingNow(root).epoch).not.toBe(before);
  });

  test('collect: a provider body landed (its session has no transcript) moves it', async () => {
    const base = tempDir('aszcol-epoch-');
    const root = join(base, 'data');
    const raw = join(base, 'raw');
    mkdirSync(join(base, 'projects'), { recursive: true });
    const config = writeConfig(base, root, join(base, 'projects'), `    provider_bodies: ${JSON.stringify(raw)}\n`);
    const s = bodySession(2);
    writeBodies(raw, s);
    mkdirSync(root, { recursive: true });
    const before = landingNow(root).epoch;
    const r = await runCli(['collect', '--once', '--json', '--config', config]);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toMatchObject({ sessions: 0, bodies: { landed: 4 } });
    expect(landingNow(root).epoch).not.toBe(before);
    expect(landingNow(root).writers).toEqual([]);
  });

  test("collect: the plugin's spooled observations landed beside a settled session move it", async () => {
    const base = tempDir('aszcol-epoch-');
    const { root, config } = await settledRoot(base, 2, {});
    const before = landingNow(root).epoch;
    const sid = settledSid(1);
    const input = {
      session_id: sid,
      cwd: '/w',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_use_id: 'toolu_epoch',
      tool_input: { command: 'make' },
    };
    appendSpoolLineSync(root, sid, JSON.stringify(observeHookInput(Buffer.from(JSON.stringify(input)), '2026-12-01T10:00:00.000Z')));
    const r = await runCli(['collect', '--once', '--json', '--config', config]);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toMatchObject({ hooks: { landed: 1 } });
    expect(landingNow(root).epoch).not.toBe(before);
    expect(landingNow(root).writers).toEqual([]);
  });

  test('the OTLP landing thread: each round it lands in a session, and its state flush, moves it', async () => {
    const root = tempDir('aszcol-epoch-');
    const session = '0b5e8f0e-5a8e-4f6c-9d51-2f1d7c3a9e02';
    let ns = BigInt(Date.UTC(2026, 10, 30, 5, 14, 12)) * 1_000_000n;
    const writer = new SessionWriter(
      root,
      () => {},
      () => (ns += 1_000_000n),
    );
    const epochs = [landingNow(root).epoch];
    for (const tag of ['a', 'b']) {
      const w = new WaitingWork();
      w.add({
        signal: 'logs',
        receivedAtNs: ns,
        body: ccLogsRequest(session, 0, Date.UTC(2026, 10, 30, 5, 14, 12), tag),
        namesRule: NAMES_RULE_VERSION,
        at: 0,
        end: 1,
      });
      const round = new Round(() => {});
      const finish = writer.prepare(round, session, w.sessions.get(session)!);
      expect(finish).toBeDefined();
      await round.land();
      expect(finish!()).toBeUndefined();
      epochs.push(landingNow(root).epoch);
    }
    writer.flush();
    epochs.push(landingNow(root).epoch);
    expect(new Set(epochs).size).toBe(epochs.length);
    expect(landingNow(root).writers).toEqual([]);
  });
});

describe('a parse records the epoch only when no writer landed from its start to its end', () => {
  test('a writer marked through the parse keeps it from recording; once it finished, the next parse records the new epoch', async () => {
    const base = tempDir('aszcol-epoch-');
    const { root } = await settledRoot(base, 2, {});
    const mark = LandingMark.begin(root);
    await parseRootNow(root);
    expect(recorded(root)).toBeUndefined();
    mark.finish(root);
    await parseRootNow(root);
    expect(recorded(root)).toEqual({ epoch: landingNow(root).epoch, boot: landingNow(root).boot });
  });

  test('a parse that wrote rounds waits for its last writes to leave the clock grain, so it records the epoch and the next parse needs no look at any session', async () => {
    const base = tempDir('aszcol-epoch-');
    const { root, src, config } = await settledRoot(base, 3, {});
    for (let i = 0; i < 3; i++) writeLines(join(src, '-p', `${settledSid(i)}.jsonl`), [rec.user(settledSid(i), `again ${i}`)], { append: true });
    await collect(config);
    // Every session gets a new round now, each written just before the parse ends.
    const parsed = await parseRootNow(root);
    expect(parsed.map((p) => ('result' in p ? p.result.status : p.error.message))).toEqual(['written', 'written', 'written']);
    expect(recorded(root)).toEqual({ epoch: landingNow(root).epoch, boot: landingNow(root).boot });
    expect(Object.keys(loadSettledStamps(root, PARSER, POLICY)!.sessions)).toHaveLength(3);
  });

  test("a dead writer's mark keeps the quick answer to a stat of each session until a parse sweeps it after a new epoch", async () => {
    const base = tempDir('aszcol-epoch-');
    const { root, config } = await settledRoot(base, 2, {});
    await parseRootNow(root);
    const epoch = landingNow(root).epoch;
    expect(recorded(root)?.epoch).toBe(epoch);
    const quick = (env: NodeJS.ProcessEnv = { XDG_CACHE_HOME: join(base, 'cache') }) => {
      let out = '';
      const r = quickParse({ config, json: true }, { out: (l) => (out += l), err: () => {} }, env);
      return r && 'code' in r ? out : undefined;
    };
    // Remember the configuration's answer, as a parse started on its own does.
    expect((await runCli(['parse', '--config', config], { env: { XDG_CACHE_HOME: join(base, 'cache') } })).code).toBe(0);
    expect(quick()).toBeDefined();

    // A directory time that moved without a writer (a person's touch): with the epoch trusted, no session is looked at.
    const streams = join(root, settledSid(0), 'streams');
    utimesSync(streams, new Date(), new Date());
    expect(quick()).toBeDefined();

    // A writer killed while landing: its mark stays; the quick answer falls back to each session's stat, which sees the moved time.
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const markDir = join(root, '_conversations', '.landing');
    writeFileSync(join(markDir, `${dead}~${encodeURIComponent(hostname())}~killed.writing`), '');
    expect(landingNow(root).writers).toHaveLength(1);
    expect(quick()).toBeUndefined();

    await parseRootNow(root);
    const swept = landingNow(root);
    expect(swept.writers).toEqual([]);
    expect(swept.epoch).not.toBe(epoch);
    expect(readFileSync(join(markDir, 'epoch'), 'utf8')).toBe(swept.epoch);
  });

  test("a collect killed while it wrote the epoch: the next collect sweeps the writer's mark and its epoch temporary, and a live writer's stay", async () => {
    const base = tempDir('aszcol-epoch-');
    const { root, config } = await settledRoot(base, 2, {});
    const markDir = join(root, '_conversations', '.landing');
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const deadMark = `${dead}~${encodeURIComponent(hostname())}~killed.writing`;
    // The name shape moveEpoch writes (tempPath): the writer's pid, then a hex suffix.
    const deadTemp = `.tmp-epoch-${dead}-0badc0de`;
    const liveTemp = `.tmp-epoch-${process.pid}-0badc0de`;
    for (const name of [deadMark, deadTemp, liveTemp]) writeFileSync(join(markDir, name), '');
    const before = landingNow(root).epoch;

    await collect(config);
    const names = readdirSync(markDir);
    expect(names).not.toContain(deadMark);
    expect(names).not.toContain(deadTemp);
    expect(names).toContain(liveTemp); // this test's own process is alive: its temporary may be mid-write
    expect(landingNow(root).epoch).not.toBe(before); // the dead writer's changes are seen by the long way
  });
});
