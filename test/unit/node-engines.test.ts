import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { REPO } from '../helpers/cli.js';

interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
  optional?: boolean;
}

const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };

/** Every locked package whose declared Node range refuses `version` (npm ci would warn EBADENGINE). */
function refusing(version: string): string[] {
  const out: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.engines === undefined || Array.isArray(entry.engines)) continue;
    const range = entry.engines.node;
    if (range !== undefined && !semver.satisfies(version, range)) out.push(`${path}@${entry.version ?? '?'} wants node ${range}`);
  }
  return out;
}

describe('npm ci installs without engine warnings on the Node the README promises', () => {
  const lowest = semver.minVersion(manifest.engines.node);

  test('the manifest names a lowest Node version', () => {
    expect(lowest).not.toBeNull();
    expect(semver.major(lowest!)).toBe(20);
  });

  test('every locked package accepts the lowest promised Node version', () => {
    expect(refusing(lowest!.version)).toEqual([]);
  });

  test('every locked package accepts the Node running the tests', () => {
    expect(refusing(process.versions.node)).toEqual([]);
  });

  test('the check is not blind: an old Node is refused by known packages', () => {
    expect(refusing('16.0.0').length).toBeGreaterThan(0);
  });
});
