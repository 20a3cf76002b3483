/**
 * `aszcol conversation ID` as a person reads it: the main stream first, each prompt as its text,
 * and the tokens of each talk and stream, checked against the transcript Claude Code would have
 * written (the usage on its assistant records, one call counted once however many records it has).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { collectAndParse, runCli, SHARED } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const FIXTURE = join(SHARED, 'conformance', 'scenarios', 'fixture.yaml');
const SESSION = '00000001-0000-4000-8000-000000000001';

let dir = '';
let config = '';
let project = '';
let out: string[] = [];

interface SourceLine {
  type?: string;
  message?: { id?: string; content?: unknown; usage?: Record<string, number> };
}

const readSource = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as SourceLine);

/** The words the command prints for a transcript's usage, summed over its distinct message ids. */
function expectedTokens(lines: SourceLine[]): string {
  const byCall = new Map<string, Record<string, number>>();
  for (const l of lines) if (l.type === 'assistant' && l.message?.id && l.message.usage) byCall.set(l.message.id, l.message.usage);
  const sum = { in: 0, out: 0, cache_read: 0, cache_write: 0 };
  for (const u of byCall.values()) {
    sum.in += u.input_tokens ?? 0;
    sum.out += u.output_tokens ?? 0;
    sum.cache_read += u.cache_read_input_tokens ?? 0;
    sum.cache_write += u.cache_creation_input_tokens ?? 0;
  }
  return `tokens in ${sum.in} out ${sum.out} cache_read ${sum.cache_read} cache_write ${sum.cache_write}`;
}

beforeAll(async () => {
  dir = tempDir();
  config = join(dir, 'aszcol.yaml');
  expect((await runCli(['scenario', 'build', FIXTURE, '--out', dir, '--at', '2026-06-01T09:00:00Z'])).code).toBe(0);
  await collectAndParse(config);
  project = join(dir, '_source', 'projects', readdirSync(join(dir, '_source', 'projects'))[0]!);
  const r = await runCli(['conversation', SESSION, '--config', config]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  out = r.stdout.split('\n');
});

describe('aszcol conversation, printed for a person', () => {
  test('the main stream comes first and the helper after it', () => {
    const streams = out.filter((l) => /^\s*stream\s/.test(l));
    expect(streams).toHaveLength(2);
    expect(streams[0]).toContain('stream/main');
    expect(streams[1]).toContain('role=child');
  });

  test("each prompt is printed as its text, the transcript's own words", () => {
    const main = readSource(join(project, `${SESSION}.jsonl`));
    const prompts = main.filter((l) => l.type === 'user' && typeof l.message?.content === 'string').map((l) => l.message!.content as string);
    expect(prompts.length).toBeGreaterThan(0);
    const printed = out.filter((l) => /^\s*message\.external\s/.test(l));
    expect(printed.length).toBeGreaterThan(0);
    expect(printed[0]).toContain(`"${prompts[0]!}"`);
  });

  test("the tokens of each stream, and of the whole, are the transcript's usage summed once per call", () => {
    const main = readSource(join(project, `${SESSION}.jsonl`));
    const agentDir = join(project, SESSION, 'subagents');
    const child = readSource(
      join(
        agentDir,
        readdirSync(agentDir).find((f) => f.endsWith('.jsonl'))!,
      ),
    );
    const mainLine = out.find((l) => /^\s*stream\s+stream\/main\b/.test(l))!;
    const childLine = out.find((l) => /^\s*stream\s/.test(l) && l.includes('role=child'))!;
    expect(mainLine).toContain(expectedTokens(main));
    expect(childLine).toContain(expectedTokens(child));
    expect(out).toContain(`total ${expectedTokens([...main, ...child])}`);
  });

  test('a talk sums its own calls; a talk with no call that reported usage says its tokens are unknown, not zero', () => {
    const talks = out.filter((l) => /^\s*talk\s/.test(l));
    expect(talks.find((l) => l.includes('talk/main/s1-cycle'))).toMatch(/tokens in \d+ out \d+/);
    const compact = talks.find((l) => l.includes('talk/main/s8-cycle-compact'))!;
    expect(compact).toContain('tokens unknown');
    expect(compact).not.toContain('tokens in 0');
  });
});
