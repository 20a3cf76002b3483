/**
 * A checkpoint's `lose` of the plugin's kinds, `changes` and `execution`: in aszcol the plugin's
 * records are hook spool lines, so the loss takes the lines one build pass appended for the named
 * stream and nothing else. Each scenario's expectation fails both ways: with the loss it must not
 * find what was lost, and without it must find it; a loss that names nothing there fails by name.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { ScenarioChecker } from '../../src/scenario/check.js';
import { loseObservations } from '../../src/scenario/lose-observations.js';
import { appendSpoolLineSync, readSpool } from '../../src/storage/hook-spool.js';
import { REPO } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

type Expectation = { checkpoints: Record<string, Record<string, unknown>>; properties?: Record<string, boolean> };

/** One of our scenarios, checked in both formats against its own expectation changed by `edit`. */
function check(name: string, edit: (e: Expectation) => void) {
  const dir = tempDir();
  copyFileSync(join(REPO, 'test', 'scenarios', `${name}.yaml`), join(dir, `${name}.yaml`));
  const e = parse(readFileSync(join(REPO, 'test', 'scenarios', `${name}.expect.yaml`), 'utf8')) as Expectation;
  edit(e);
  writeFileSync(join(dir, `${name}.expect.yaml`), stringify(e));
  return new ScenarioChecker(join(dir, `${name}.yaml`), { formats: ['claude-code', 'sd'] }).run();
}

const failuresAt = (rs: ReturnType<typeof check>, where: RegExp) => rs.flatMap((r) => r.failures).filter((f) => where.test(f.where));

describe.each([
  ['lose-execution', 'final.view.executions'],
  ['lose-changes', 'final.view.executions'],
])('%s', (name, key) => {
  test('as written it passes in both formats and across them', () => {
    expect(check(name, () => undefined).map((r) => `${r.format} ${r.status}`)).toEqual(['claude-code passed', 'sd passed', 'all passed']);
  });

  test('without the loss, the expectation that the call is no longer observed fails in each format', () => {
    const rs = check(name, (e) => delete e.checkpoints.final!.lose);
    const f = failuresAt(rs, new RegExp(key.replace(/\./g, '\\.') + '$'));
    expect(f.map((x) => [x.where, x.expected, x.got])).toEqual([
      [`claude-code: ${key}`, 1, 2],
      [`sd: ${key}`, 1, 2],
    ]);
  });

  test('with the loss, an expectation that the call is still observed fails in each format', () => {
    const rs = check(name, (e) => ((e.checkpoints.final!.view as Record<string, unknown>).executions = 2));
    expect(failuresAt(rs, /final\.view\.executions$/).map((x) => [x.expected, x.got])).toEqual([
      [2, 1],
      [2, 1],
    ]);
  });
});

describe('a loss that names nothing there', () => {
  test('a second pass of execution observations on main, or changes on a stream with none, fails naming why', () => {
    const rs = check('lose-execution', (e) => {
      e.checkpoints.final!.lose = [{ stream: 'main', kind: 'execution', nth: 3 }, { kind: 'changes' }];
      delete e.checkpoints.final!.view;
    });
    expect(failuresAt(rs, /final\.lose$/).map((f) => f.got)).toEqual([
      '(no such observations: 2 build pass(es) appended execution observations on main)',
      '(no such observations: 0 build pass(es) appended changes observations)',
      '(no such observations: 2 build pass(es) appended execution observations on main)',
      '(no such observations: 0 build pass(es) appended changes observations)',
    ]);
  });
});

describe('loseObservations on a spool', () => {
  const obs = (id: string, stream: string, mcp: boolean) =>
    JSON.stringify({ schema: 'aszcol-hook/1', id, event: 'tool_post', session: 's1', stream, ...(mcp ? { mcp: { server: 'x', tool: 'y' } } : {}) });

  test('takes only the named pass’s lines of the kind on the stream, a repeated line with it, and keeps the session’s start and every other line', () => {
    const root = tempDir();
    for (const line of [
      JSON.stringify({ schema: 'aszcol-hook/1', id: 'start', event: 'session_start', session: 's1', stream: 'main' }),
      obs('m1', 'main', true),
      obs('m1', 'main', true),
      obs('c1', 'main', false),
      obs('a1', 'agent-a', true),
      obs('m2', 'main', true),
    ])
      appendSpoolLineSync(root, 's1', line);
    const passes = [['start', 'm1', 'c1', 'a1'], ['m2']];
    expect(loseObservations(root, 's1', passes, { kind: 'execution', stream: 'main', nth: 2 })).toEqual({ removed: 1 });
    expect(loseObservations(root, 's1', passes, { kind: 'execution', stream: 'main', nth: 1 })).toEqual({ removed: 2 });
    expect(readSpool(root, 's1').map((l) => (l.value as { id: string }).id)).toEqual(['start', 'c1', 'a1']);
    expect(loseObservations(root, 's1', passes, { kind: 'execution', stream: 'main', nth: 1 })).toEqual({
      missing: '0 build pass(es) appended execution observations on main',
    });
    expect(loseObservations(tempDir(), 's1', passes, { kind: 'changes', nth: 1 })).toEqual({ missing: 'the session has no plugin observations' });
  });
});
