/**
 * A checkpoint's `view` keys (asz 0.6) against the document the page serves, the conversation's
 * changes and the plugin's observations: each key fails when the root says otherwise, a withheld
 * view is counted whole, and an unknown key or hide category is an error naming it.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ScenarioChecker } from '../../src/scenario/check.js';
import { REPO } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

/** The view-keys scenario (three calls with bodies, an Edit, an MCP call), checked in sd against `view` at its end. */
function check(view: Record<string, unknown>, cp = 'final') {
  const dir = tempDir();
  copyFileSync(join(REPO, 'test', 'scenarios', 'view-keys.yaml'), join(dir, 'case.yaml'));
  writeFileSync(join(dir, 'case.expect.yaml'), stringify({ checkpoints: { [cp]: { view } } }));
  return new ScenarioChecker(join(dir, 'case.yaml'), { formats: ['sd'] }).run()[0]!;
}

describe('view keys', () => {
  test('each count the root does not hold fails, named, with what it holds', () => {
    const r = check({
      steps: 9,
      provider_bodies: 4,
      captured_prompts: 2,
      provider_files: 2,
      flags: { external_input: 2 },
      changes: 2,
      changed_files: 0,
      captured_by: { 'asz-plugin': 1 },
      changes_joined: 0,
      executions: 0,
      executions_joined: 0,
      outcomes: { failed: 1 },
    });
    expect(r.status).toBe('failed');
    expect(Object.fromEntries(r.failures.map((f) => [f.where.replace('sd: final.view.', ''), f.got]))).toEqual({
      steps: 8,
      provider_bodies: 6,
      captured_prompts: 3,
      provider_files: 1,
      flags: { external_input: 1, finished: 4 },
      changes: 1,
      changed_files: 1,
      captured_by: { 'claude-code': 1 },
      changes_joined: 1,
      executions: 1,
      executions_joined: 1,
      outcomes: { returned: 1 },
    });
  });

  test('withheld is named whole: a category the withheld view counts and the expectation leaves out fails', () => {
    expect(check({ hide: ['system_prompt'], withheld: { provider_bodies: 6 } }).status).toBe('passed');
    const partial = check({ hide: ['system_prompt'], withheld: {} });
    expect(partial.failures.map((f) => [f.where, f.got])).toEqual([['sd: final.view.withheld', { provider_bodies: 6 }]]);
    // Without hide nothing is withheld.
    expect(check({ withheld: {} }).status).toBe('passed');
  });

  test('collect takes max_delta_bytes alone, a whole number of bytes', () => {
    const dir = tempDir();
    copyFileSync(join(REPO, 'test', 'scenarios', 'view-keys.yaml'), join(dir, 'case.yaml'));
    const run = (collect: unknown) => {
      writeFileSync(join(dir, 'case.expect.yaml'), stringify({ collect }));
      return () => new ScenarioChecker(join(dir, 'case.yaml'), { formats: ['sd'] }).run();
    };
    expect(run({ max_delta_bytes: -1 })).toThrow(/collect.max_delta_bytes: a whole number of bytes, got -1/);
    expect(run({ max_files: 2 })).toThrow(/collect: unknown key "max_files"/);
  });

  test('an unknown key, or a category no view withholds, is an error naming it', () => {
    expect(() => check({ colour: 'red' })).toThrow(/checkpoints.final.view: unknown key "colour"/);
    expect(() => check({ hide: ['secrets'] })).toThrow(/view.hide: "secrets" is not a category a view withholds/);
  });
});
