/**
 * Fuzzing the configuration reader: real configurations (the embedded default, the container's,
 * one with every component type), mutated as text and with hostile values in place of values.
 * `parseConfig` must either return a configuration or throw a ConfigError naming where; any
 * other exception (a TypeError, a RangeError, a YAML library error let through) is a bug, and so
 * is touching the disk.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedDefaultYaml, parseConfig } from '../../src/service/config.js';
import { REGISTRY } from '../../src/service/registry.js';
import { ConfigError } from '../../src/util/errors.js';
import { REPO } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { Budget, HOSTILE_NAMES, STRICT, TEXT_SPECIALS, fuzzSeed, loadSeeds, mutateText, rand, snapshotTree, withSeed, type Rand } from './kit.js';

/** Top-level entries other suites create in the repository while this one runs (git-ignored). */
const OTHER_SUITES_OUTPUT = new Set(['test-artifacts']);

afterAll(cleanupTemp);

const SEED = fuzzSeed();

const FULL = (root: string) => `storage:
  root: ${JSON.stringify(root)}
receivers:
  claude_code_local:
    source_root: ${JSON.stringify(join(root, '..', 'projects'))}
    include: []
    exclude: ["/private/tmp/**"]
    interval: 5s
    max_delta_bytes: 2MiB
    workers: 0
  claude_code_otlp:
    protocols:
      grpc: { endpoint: 127.0.0.1:4317 }
      http: { endpoint: 127.0.0.1:4318 }
    max_request_bytes: 16MiB
    durability: machine
processors:
  assembler: { max_round_bytes: 2MiB }
  token_metrics: { lookback: 24h }
exporters:
  otlp/oap:
    protocol: grpc
    endpoint: \${env:OAP_ENDPOINT:-127.0.0.1:4317}
  otlp/backup:
    protocol: http
    endpoint: "http://127.0.0.1:4318"
  prometheus: { endpoint: 127.0.0.1:9464 }
extensions:
  health_check: { endpoint: 127.0.0.1:13133 }
  view: { endpoint: 127.0.0.1:8787 }
service:
  extensions: [health_check, view]
  pipelines:
    sessions: { receivers: [claude_code_local, claude_code_otlp], processors: [assembler], exporters: [otlp/oap, otlp/backup] }
    metrics:  { receivers: [claude_code_otlp], processors: [token_metrics], exporters: [otlp/oap, prometheus] }
  telemetry:
    metrics: { address: 127.0.0.1:8888 }
    logs: { level: info }
  shutdown_timeout: 30s
  final_pass: true
`;

/** Values where a duration, a size, an endpoint, a list or a name is expected. */
const HOSTILE_VALUES = [
  ...HOSTILE_NAMES.slice(0, 22).map((x) => JSON.stringify(x)),
  '-1',
  '0',
  '1e400',
  '-5s',
  '99999999999999999999h',
  '1e30GiB',
  '0x10',
  '.nan',
  '.inf',
  '~',
  '[]',
  '{}',
  '[[[[[[]]]]]]',
  '!!binary AAAA',
  '!!js/function "x"',
  '!!set {a, b}',
  '${env:UNSET_FOR_FUZZ}',
  '${env:A:-${env:B}}',
  '${env:',
  '$$',
  '${env:HOSTILE}',
  '*nowhere',
  '&anchor x',
  '"\\ud800"',
  '"\\u0000"',
  '999999:99999',
  '[::1]:-1',
  'host:0x50',
  'http://[::1',
  'yes',
  'null',
];

/** A YAML alias bomb: each level refers to the one above ten times. */
const ALIAS_BOMB = [
  'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
  ...Array.from(
    { length: 8 },
    (_, i) =>
      `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
        .fill(`*${String.fromCharCode(97 + i)}`)
        .join(',')}]`,
  ),
].join('\n');

function mutateConfig(r: Rand, text: string): { name: string; body: string } {
  const lines = text.split('\n');
  switch (r.int(6)) {
    case 0:
    case 1: {
      // A value replaced: keep the key and its indentation, put something hostile after the colon.
      const candidates = lines.map((l, i) => [l, i] as const).filter(([l]) => /:\s*\S/.test(l) && !l.trimStart().startsWith('#'));
      const [line, i] = r.pick(candidates);
      const value = r.pick(HOSTILE_VALUES);
      lines[i] = line.replace(/:\s*\S.*$/, `: ${value}`);
      return { name: `value ${value} at line ${i + 1}`, body: lines.join('\n') };
    }
    case 2: {
      const i = r.int(lines.length);
      const op = r.int(3);
      if (op === 0) lines.splice(i, 1);
      else if (op === 1) lines.splice(i, 0, lines[i] ?? '');
      else lines[i] = ' '.repeat(r.int(9)) + (lines[i] ?? '').trimStart();
      return { name: `line ${i + 1} ${['deleted', 'duplicated', 're-indented'][op]}`, body: lines.join('\n') };
    }
    case 3:
      return { name: 'alias bomb', body: `${ALIAS_BOMB}\n${text}` };
    default: {
      const m = mutateText(r, text, TEXT_SPECIALS);
      return { name: m.name, body: m.body.toString('utf8') };
    }
  }
}

/**
 * Breaks this suite found that are not fixed yet (F2, F3: the YAML library's ReferenceError for an
 * unresolved alias or an alias bomb escapes parseConfig). Counted apart, not failed, so the rest
 * of the fuzzing still guards everything else.
 * Fixed (F2, F3 are ConfigErrors now): only FUZZ_STRICT=0, for an older build, counts them apart.
 */
const KNOWN_TODAY = (err: unknown) => !STRICT && err instanceof ReferenceError && /alias/i.test(err.message);

/** Parses, or throws a ConfigError; anything else thrown is returned as the failure. */
function parseOrConfigError(text: string, env: NodeJS.ProcessEnv): { outcome: 'parsed' | 'ConfigError' | 'known break' | string } {
  try {
    const cfg = parseConfig(text, env, 'fuzz.yaml', REGISTRY);
    expect(typeof cfg.storageRoot).toBe('string');
    return { outcome: 'parsed' };
  } catch (err) {
    if (err instanceof ConfigError) return { outcome: 'ConfigError' };
    if (KNOWN_TODAY(err)) return { outcome: 'known break' };
    return { outcome: `${(err as Error)?.name}: ${(err as Error)?.message}\n${(err as Error)?.stack ?? ''}` };
  }
}

interface ConfigSeed {
  issue: string;
  about: string;
  yaml: string;
  env?: Record<string, string>;
}

describe('configuration fuzz', () => {
  test('the regression seeds replay first: parsed or a ConfigError (F2, F3)', () => {
    const seeds = loadSeeds<ConfigSeed>('config');
    expect(seeds.length).toBeGreaterThanOrEqual(2);
    for (const { file, seed } of seeds) {
      expect({ file, ...parseOrConfigError(seed.yaml, seed.env ?? {}) }).toEqual({
        file,
        outcome: expect.stringMatching(/^(parsed|ConfigError|known break)$/),
      });
    }
  });

  test(`seeded mutations of real configurations: parsed or a ConfigError, never anything else (FUZZ_SEED=${SEED})`, async () => {
    const sandbox = tempDir('aszcol-fuzz-config-');
    const root = join(sandbox, 'data');
    const bases = [embeddedDefaultYaml(REGISTRY), readFileSync(join(REPO, 'deploy', 'aszcol.container.yaml'), 'utf8'), FULL(root)];
    for (const b of bases) expect(parseOrConfigError(b, { HOME: sandbox })).toEqual({ outcome: 'parsed' });
    // Suites in other workers write their own output beside it meanwhile (view-browser's screenshots): not this read's doing.
    const repoEntries = () =>
      readdirSync(REPO)
        .filter((name) => !OTHER_SUITES_OUTPUT.has(name))
        .sort();
    const repoBefore = repoEntries();
    const r = rand(SEED);
    const budget = new Budget(6000, 3000, 26);
    const outcomes = new Map<string, number>();
    let current = { name: '', body: '' };
    await withSeed(
      SEED,
      () => `config #${budget.count} (${current.name}):\n${current.body}`,
      () => {
        while (budget.more()) {
          current = mutateConfig(r, r.pick(bases));
          const env = { HOME: sandbox, HOSTILE: r.pick(HOSTILE_NAMES), OAP_ENDPOINT: r.pick(['127.0.0.1:4317', '', ':::', 'x'.repeat(5000)]) };
          const { outcome } = parseOrConfigError(current.body, env);
          expect({ outcome }).toEqual({ outcome: expect.stringMatching(/^(parsed|ConfigError|known break)$/) });
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        }
      },
    );
    // Reading a configuration writes nothing: not the storage root, not beside it, not in the working directory.
    expect(snapshotTree(sandbox)).toEqual([]);
    expect(repoEntries()).toEqual(repoBefore);
    // Few on a loaded machine: YAML nested thousands deep takes the parser seconds (itself a finding to watch).
    expect(budget.count).toBeGreaterThan(25);
    expect([...outcomes.keys()]).toEqual(expect.arrayContaining(['ConfigError', 'parsed']));
  }, 30_000);
});
