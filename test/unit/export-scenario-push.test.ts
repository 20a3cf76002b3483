import { afterAll, describe, expect, test } from '@jest/globals';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScenarioChecker } from '../../src/scenario/check.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { SHARED } from '../helpers/cli.js';

afterAll(cleanupTemp);

/** A copy of a scenario whose expectation also says which kinds a push must carry. */
function withPush(src: string, push: string): string {
  const dir = tempDir('aszcol-scenario-push-');
  const file = join(dir, src.split('/').pop()!);
  copyFileSync(src, file);
  writeFileSync(file.replace(/\.yaml$/, '.expect.yaml'), readFileSync(src.replace(/\.yaml$/, '.expect.yaml'), 'utf8') + `\npush:\n${push}`);
  return file;
}

describe("the scenario checker's push", () => {
  test("pushes each format's root over gRPC and HTTP and finds every listed kind", () => {
    const file = withPush(
      join(SHARED, 'conformance', 'scenarios', 'workflow.yaml'),
      '  kinds: [transcript, agent_meta, journal, workflow_manifest, workflow_script, round]\n',
    );
    const results = new ScenarioChecker(file, { formats: ['claude-code', 'sd'] }).run();
    for (const r of results)
      expect({ format: r.format, status: r.status, failures: r.failures, unchecked: r.unchecked }).toEqual({
        format: r.format,
        status: 'passed',
        failures: [],
        unchecked: [],
      });
  });

  test('a kind the push did not carry fails the scenario, over each transport', () => {
    const file = withPush('test/scenarios/child-tools.yaml', '  kinds: [transcript, journal]\n');
    const [cc] = new ScenarioChecker(file, { formats: ['claude-code'] }).run();
    expect(cc!.status).toBe('failed');
    expect(cc!.failures.map((f) => f.where)).toEqual(['claude-code: push over grpc: kinds', 'claude-code: push over http: kinds']);
    expect(cc!.failures[0]!.got).toEqual(['agent_meta', 'round', 'transcript']);
  });

  test('a push key other than kinds is an error in the expectation file', () => {
    const file = withPush('test/scenarios/child-tools.yaml', '  kind: [transcript]\n');
    expect(() => new ScenarioChecker(file, { formats: ['sd'] }).run()).toThrow(/child-tools\.expect\.yaml: push: unknown key "kind"/);
  });
});
