/**
 * A checkpoint's `lose` of the plugin's kinds, `changes` and `execution`: as in asz 0.6, these are
 * landed files (the hook spool's observations, landed per stream and kind), so the loss deletes the
 * named file after the round that bound it. The document turns incomplete naming the round, and
 * verify counts the round's missing sequence and the gap the file leaves in its stream: an ord gap
 * and a byte gap for a first file (three problems), an end gap for an only one (two). Each pair's
 * expectation fails both ways: without the loss the root is whole, and with it the root is not.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { ScenarioChecker } from '../../src/scenario/check.js';
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

const failuresAt = (rs: ReturnType<typeof check>, where: RegExp) =>
  rs
    .flatMap((r) => r.failures)
    .filter((f) => where.test(f.where))
    .map((f) => [f.where, f.expected, f.got]);

describe.each([
  ['lose-execution', 3],
  ['lose-changes', 2],
])('%s', (name, verifyProblems) => {
  test('as written it passes in both formats and across them', () => {
    expect(check(name, () => undefined).map((r) => `${r.format} ${r.status}`)).toEqual(['claude-code passed', 'sd passed', 'all passed']);
  });

  test('without the loss, the expectation of an incomplete document and its verify problems fails in each format', () => {
    const rs = check(name, (e) => delete e.checkpoints.final!.lose);
    expect(failuresAt(rs, /final\.(view\.state|view\.problems|verify\.problems)$/)).toEqual(
      ['claude-code', 'sd'].flatMap((f) => [
        [`${f}: final.view.state`, 'incomplete', 'verified'],
        [`${f}: final.view.problems`, 1, 0],
        [`${f}: final.verify.problems`, verifyProblems, 0],
      ]),
    );
  });

  test('with the loss, an expectation that the root is whole fails in each format', () => {
    const rs = check(name, (e) => {
      Object.assign(e.checkpoints.final!.view as object, { state: 'verified', problems: 0 });
      e.checkpoints.final!.verify = { problems: 0 };
    });
    expect(failuresAt(rs, /final\.(view\.state|verify\.problems)$/)).toEqual(
      ['claude-code', 'sd'].flatMap((f) => [
        [`${f}: final.view.state`, 'verified', 'incomplete'],
        [`${f}: final.verify.problems`, 0, verifyProblems],
      ]),
    );
  });
});

describe('a loss that names nothing there', () => {
  test('a third execution file on main, or a changes file where none landed, fails naming the loss', () => {
    const rs = check('lose-execution', (e) => {
      e.checkpoints.final!.lose = [
        { stream: 'main', kind: 'execution', nth: 3 },
        { stream: 'main', kind: 'changes' },
      ];
      delete e.checkpoints.final!.view;
      delete e.checkpoints.final!.verify;
    });
    expect(failuresAt(rs, /final\.lose$/).map(([, expected, got]) => [expected, got])).toEqual(
      [1, 2].flatMap(() => [
        [{ stream: 'main', kind: 'execution', nth: 3 }, '(no such landed file)'],
        [{ stream: 'main', kind: 'changes' }, '(no such landed file)'],
      ]),
    );
  });
});
