import { describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ScenarioChecker, formatFailures, type CheckResult } from '../../src/scenario/check.js';
import { listScenarioFiles } from '../../src/scenario/files.js';
import { SHARED, REPO } from '../helpers/cli.js';

const SHARED_SCENARIOS = join(SHARED, 'conformance', 'scenarios');
const OWN_SCENARIOS = join(REPO, 'test', 'scenarios');
/** "NAME (FORMAT)" → why it cannot pass yet. */
const NOT_YET = (parseYaml(readFileSync(join(REPO, 'test', 'conformance', 'not-yet.yaml'), 'utf8')) ?? {}) as Record<string, string>;

const results: CheckResult[] = [];
const keyOf = (r: CheckResult) => `${r.scenario} (${r.format})`;
const describeResult = (r: CheckResult) =>
  `${keyOf(r)}: ${r.status}${r.unchecked.length ? `, not checked: ${r.unchecked.join(', ')}` : ''}\n${formatFailures(r).join('\n')}`;

function runAll(dir: string) {
  for (const file of listScenarioFiles([dir])) {
    test(file.slice(dir.length + 1), () => {
      const mine = new ScenarioChecker(file, { formats: ['claude-code', 'sd'] }).run();
      results.push(...mine);
      // Every result not on the list passes; every listed one still does not (the list only shrinks).
      expect(mine.filter((r) => r.status !== 'passed' && !(keyOf(r) in NOT_YET)).map(describeResult)).toEqual([]);
      expect(mine.filter((r) => r.status === 'passed' && keyOf(r) in NOT_YET).map((r) => `${keyOf(r)} passes: take it off not-yet.yaml`)).toEqual([]);
    });
  }
}

describe('the conformance suite (../shared/conformance/scenarios), both formats', () => {
  test('the shared conformance folder is present', () => {
    if (!existsSync(SHARED_SCENARIOS)) process.stderr.write(`\n!!! ${SHARED_SCENARIOS} is absent: the conformance suite did not run !!!\n\n`);
    expect(existsSync(SHARED_SCENARIOS)).toBe(true);
  });
  if (existsSync(SHARED_SCENARIOS)) runAll(SHARED_SCENARIOS);
});

describe('our own scenarios (test/scenarios), both formats', () => {
  runAll(OWN_SCENARIOS);
});

describe('the count', () => {
  test('each format prints how many scenarios ran and how many passed; every listed scenario was run', () => {
    const lines = (['claude-code', 'sd', 'all'] as const).map((format) => {
      const of = results.filter((r) => r.format === format);
      const n = (s: CheckResult['status']) => of.filter((r) => r.status === s).length;
      return `${format}: ${of.length} scenarios, ${n('passed')} passed, ${n('incomplete')} incomplete, ${n('failed')} failed`;
    });
    process.stdout.write(`conformance:\n  ${lines.join('\n  ')}\n  not yet (test/conformance/not-yet.yaml): ${Object.keys(NOT_YET).length}\n`);
    // A name left on the list after its scenario was removed or renamed would shrink nothing.
    const ran = new Set(results.map(keyOf));
    if (results.length) expect(Object.keys(NOT_YET).filter((k) => !ran.has(k))).toEqual([]);
  });
});
