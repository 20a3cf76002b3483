import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { collectAndParse, runCli, SHARED } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const FIXTURE = join(SHARED, 'conformance', 'scenarios', 'fixture.yaml');
const SESSION = '00000001-0000-4000-8000-000000000001';

let dir = '';
let config = '';
/** The transcript Claude Code would have written: the ground truth every record points back into. */
let mainSource: Buffer;

beforeAll(async () => {
  dir = tempDir();
  config = join(dir, 'aszcol.yaml');
  expect((await runCli(['scenario', 'build', FIXTURE, '--out', dir, '--at', '2026-06-01T09:00:00Z'])).code).toBe(0);
  await collectAndParse(config);
  const project = join(dir, '_source', 'projects', readdirSync(join(dir, '_source', 'projects'))[0]!);
  mainSource = readFileSync(join(project, `${SESSION}.jsonl`));
});

const sourceLines = () =>
  mainSource
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The source line a landed record says it came from, by its offset and length. */
const sourceOf = (record: { off: number; bytes: number }) =>
  JSON.parse(mainSource.subarray(record.off, record.off + record.bytes).toString('utf8')) as Record<string, unknown>;

const show = async (...args: string[]) => {
  const r = await runCli(['show', '--config', config, '--session', SESSION, ...args]);
  return {
    ...r,
    docs:
      r.code === 0
        ? r.stdout
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as { role?: string; seq: number; row: number; record: { id?: string; off: number; bytes: number } })
        : [],
  };
};

describe('show by record id and by tool-use id', () => {
  test('--record finds the landed record of a transcript line by its uuid, and it points back at that line', async () => {
    const lines = sourceLines().filter((l) => typeof l.uuid === 'string');
    for (const line of [lines[0]!, lines[3]!, lines.at(-1)!]) {
      const r = await show('--record', line.uuid as string);
      expect(r.stderr).toBe('');
      expect(r.docs).toHaveLength(1);
      expect(r.docs[0]!.record.id).toBe(line.uuid);
      expect(sourceOf(r.docs[0]!.record).uuid).toBe(line.uuid);
      // The same record by position.
      const byPos = await show(String(r.docs[0]!.seq), String(r.docs[0]!.row));
      expect(byPos.docs[0]!.record).toEqual(r.docs[0]!.record);
    }
  });

  test('--tool-use gives the calling record, then the record carrying its result, as the source has them', async () => {
    const r = await show('--tool-use', 'tool-run-make-build');
    expect(r.docs.map((d) => d.role)).toEqual(['call', 'result']);
    const call = sourceOf(r.docs[0]!.record) as { message: { content: { type: string; id?: string }[] } };
    expect(call.message.content.some((b) => b.type === 'tool_use' && b.id === 'tool-run-make-build')).toBe(true);
    const result = sourceOf(r.docs[1]!.record) as { message: { content: { type: string; tool_use_id?: string }[] } };
    expect(result.message.content.some((b) => b.type === 'tool_result' && b.tool_use_id === 'tool-run-make-build')).toBe(true);
  });

  test('an id the session does not hold exits 1 naming it; a position and an id together exit 2', async () => {
    const none = await show('--record', 'no-such-uuid');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no record with id no-such-uuid/);
    const tool = await show('--tool-use', 'toolu_nothing');
    expect(tool.code).toBe(1);
    expect(tool.stderr).toMatch(/no record calling or answering tool use toolu_nothing/);
    const both = await show('1', '2', '--record', 'x');
    expect(both.code).toBe(2);
  });
});

describe('index', () => {
  test('prints one row per landed file with its records; --rebuild after the index is deleted gives the same index', async () => {
    const before = await runCli(['index', SESSION, '--config', config, '--json']);
    expect(before.code).toBe(0);
    const ix = JSON.parse(before.stdout) as { files: { seq: number; records: number; rel: string; digest: string }[]; entries: { id?: string }[] };
    // Ground truth: every landed file on disk, its digest and its record count (lines less header and closing).
    for (const f of ix.files) {
      const bytes = readFileSync(join(dir, f.rel));
      expect(f.digest).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(f.records).toBe(
        bytes
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== '').length - 2,
      );
    }
    expect(ix.entries).toHaveLength(ix.files.reduce((n, f) => n + f.records, 0));
    // Every uuid of the main transcript is an entry id.
    const ids = new Set(ix.entries.map((e) => e.id));
    for (const l of sourceLines()) if (typeof l.uuid === 'string') expect(ids.has(l.uuid)).toBe(true);

    const text = await runCli(['index', SESSION, '--config', config]);
    expect(text.stdout.split('\n').filter((l) => /^\d+\s+(transcript|agent_meta|changes)\s/.test(l))).toHaveLength(ix.files.length);

    rmSync(join(dir, SESSION, 'index'), { recursive: true, force: true });
    const missing = await runCli(['index', SESSION, '--config', config]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no current index.*--rebuild/);
    const rebuilt = await runCli(['index', SESSION, '--config', config, '--rebuild', '--json']);
    expect(rebuilt.code).toBe(0);
    expect(JSON.parse(rebuilt.stdout)).toEqual(ix);
  });

  test('a session that was never landed exits 1 naming it', async () => {
    const r = await runCli(['index', 'nope', '--config', config]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/nope: no landed session/);
  });
});

describe('conversation --json and --yaml', () => {
  test('print the asz.view document: the same in both, covering every landed file with its digest on disk', async () => {
    const json = await runCli(['conversation', SESSION, '--config', config, '--json']);
    const yaml = await runCli(['conversation', SESSION, '--config', config, '--yaml']);
    expect(json.code).toBe(0);
    expect(yaml.code).toBe(0);
    const doc = JSON.parse(json.stdout) as {
      format: string;
      conversation: string;
      summary: { state: string; talks: number };
      files: { file: string; digest: string; kind: string }[];
    };
    expect(parseYaml(yaml.stdout)).toEqual(doc);
    expect(doc.format).toBe('asz.view');
    expect(doc.conversation).toBe(SESSION);
    expect(doc.summary.state).toBe('verified');
    // Four landed files and one round, each with the digest of its bytes on disk: the Bash call's
    // `changes` block is the plugin's observation, landed beside the transcripts.
    expect(doc.files.map((f) => f.kind).sort()).toEqual(['agent_meta', 'changes', 'round', 'transcript', 'transcript']);
    for (const f of doc.files)
      expect(f.digest).toBe(
        createHash('sha256')
          .update(readFileSync(join(dir, f.file)))
          .digest('hex'),
      );
    // The fold's own header counts the same talks.
    const fold = JSON.parse((await runCli(['conversation', SESSION, '--config', config, '--fold'])).stdout) as { head: { talks: number } };
    expect(doc.summary.talks).toBe(fold.head.talks);
  });

  test('two output modes at once exit 2; an unknown conversation exits 1', async () => {
    expect((await runCli(['conversation', SESSION, '--config', config, '--json', '--yaml'])).code).toBe(2);
    const none = await runCli(['conversation', 'nope', '--config', config, '--json']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/nope/);
  });
});
