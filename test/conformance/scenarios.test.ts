import { describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ScenarioChecker, formatFailures } from '../../src/scenario/check.js';
import { listScenarioFiles } from '../../src/scenario/files.js';
import { SHARED, REPO } from '../helpers/cli.js';

const SHARED_SCENARIOS = join(SHARED, 'conformance', 'scenarios');
const OWN_SCENARIOS = join(REPO, 'test', 'scenarios');

function runAll(dir: string) {
  const incomplete: string[] = [];
  for (const file of listScenarioFiles([dir])) {
    test(file.slice(dir.length + 1), () => {
      const results = new ScenarioChecker(file, { formats: ['claude-code', 'sd'] }).run();
      const failed = results.filter((r) => r.status === 'failed');
      expect(failed.map((r) => `${r.scenario} (${r.format})\n${formatFailures(r).join('\n')}`)).toEqual([]);
      for (const r of results) if (r.status === 'incomplete') incomplete.push(`${r.scenario} (${r.format}): not checked yet: ${r.unchecked.join(', ')}`);
    });
  }
  test('lists what could not be checked yet', () => {
    // Keys for capabilities that have not landed (the exporters) are named, never passed silently;
    // the view has landed, so only `push` may remain.
    if (incomplete.length) process.stdout.write(`incomplete scenarios:\n  ${incomplete.join('\n  ')}\n`);
    expect(incomplete.filter((l) => !/not checked yet: push$/.test(l))).toEqual([]);
  });
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
