import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseScenario, ScenarioError, type Scenario } from './model.js';

/** A scenario file, or every scenario in a directory (expectation files excluded), in name order. */
export function listScenarioFiles(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (statSync(p).isDirectory()) {
      for (const n of readdirSync(p).sort()) if (n.endsWith('.yaml') && !n.endsWith('.expect.yaml')) out.push(join(p, n));
    } else out.push(p);
  }
  return out;
}

export function loadScenario(path: string): Scenario {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ScenarioError(`YAML: ${(err as Error).message}`, path);
  }
  return parseScenario(doc, basename(path, '.yaml'));
}

export function loadExpectation(path: string): Record<string, unknown> | undefined {
  const p = path.replace(/\.yaml$/, '.expect.yaml');
  if (!existsSync(p)) return undefined;
  return (parseYaml(readFileSync(p, 'utf8')) ?? {}) as Record<string, unknown>;
}

/** Writes generated source files under a source root, creating directories. */
export function writeSources(sourceRoot: string, files: Map<string, string>): void {
  for (const [rel, content] of files) {
    const p = join(sourceRoot, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
  }
}

export const CONFIG_MARK = '# written by aszcol scenario build';

/** The storage root's own configuration: root DIR, source DIR/_source/projects, collected every 5 s. */
export function writeRootConfig(dir: string, sourceRoot: string): void {
  const path = join(dir, 'aszcol.yaml');
  if (existsSync(path) && !readFileSync(path, 'utf8').startsWith(CONFIG_MARK)) {
    throw new ScenarioError('refusing to replace a configuration this build did not write', path);
  }
  if (existsSync(path)) return; // what a person appended is kept
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path,
    `${CONFIG_MARK}\nstorage:\n  root: ${JSON.stringify(dir)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(sourceRoot)}\n    exclude: []\n    interval: 5s\n`,
  );
}
