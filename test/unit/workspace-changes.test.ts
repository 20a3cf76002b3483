import { describe, expect, test } from '@jest/globals';
import { changeRecordOf, workspacePath } from '../../src/adapters/claude-code/changes.js';
import { convertTranscriptLine } from '../../src/adapters/claude-code/dialect.js';
import { changesOfRecord, changeTotals, distinctChanges, totalsByTalk } from '../../src/assemble/workspace-changes.js';
import { mcpAttributes, splitMcpName } from '../../src/assemble/mcp-calls.js';
import type { SdRecord } from '../../src/formats/session-data/types.js';

const CWD = '/home/me/project';

/** A user line answering a tool use, as Claude Code writes it for an edit. */
function resultLine(id: string, toolUseResult: unknown, time = '2026-12-01T10:00:00.000Z'): Buffer {
  return Buffer.from(
    JSON.stringify({
      type: 'user',
      uuid: `u-${id}`,
      timestamp: time,
      cwd: CWD,
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'done' }] },
      toolUseResult,
    }),
  );
}

const asRecord = (line: Buffer) => ({ ord: 1, off: 0, sha: '', bytes: line.length, ...convertTranscriptLine(line) }) as SdRecord;

describe('a workspace change read from the runtime’s own patch', () => {
  test('an Edit: the patch’s + and − lines, the file relative to the session’s directory, the person’s hand said', () => {
    const rec = asRecord(
      resultLine('t1', {
        filePath: `${CWD}/src/a.ts`,
        oldString: 'x',
        newString: 'y\nz',
        originalFile: 'x\n',
        structuredPatch: [{ oldStart: 4, oldLines: 1, newStart: 4, newLines: 2, lines: ['-x', '+y', '+z'] }],
        userModified: true,
      }),
    );
    // The result keeps its structured outcome; the change rides as a second data part naming the tool use.
    expect(rec.parts.map((p) => p.k)).toEqual(['result', 'data']);
    expect(rec.parts[1]).toMatchObject({ of: 't1' });
    const [c] = changesOfRecord(rec, { seq: 3, row: 7 }, 'main');
    expect(c).toMatchObject({ tool_use: 't1', file: 'src/a.ts', operation: 'update', lines_added: 2, lines_removed: 1, user_modified: true });
    expect(c!.ref).toEqual({ seq: 3, row: 7, block: 1 });
  });

  test('a Write that creates a file counts its content, since the runtime sends an empty patch for it', () => {
    const rec = changeRecordOf('t2', { type: 'create', filePath: `${CWD}/n.txt`, content: 'a\nb\n', structuredPatch: [], originalFile: null }, CWD)!;
    expect(rec.files[0]).toMatchObject({ path: 'n.txt', operation: 'create', lines_added: 2, lines_removed: 0 });
  });

  test('a Write over an existing file is an update with the runtime’s patch', () => {
    const rec = changeRecordOf(
      't3',
      {
        type: 'update',
        filePath: `${CWD}/n.txt`,
        content: 'c\n',
        structuredPatch: [{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 1, lines: ['-a', '-b', '+c'] }],
      },
      CWD,
    )!;
    expect(rec.files[0]).toMatchObject({ operation: 'update', lines_added: 1, lines_removed: 2 });
  });

  test('a file outside the session’s directory keeps its absolute path; a sibling with a shared prefix is outside', () => {
    expect(workspacePath('/etc/hosts', CWD)).toBe('/etc/hosts');
    expect(workspacePath('/home/me/project-old/x', CWD)).toBe('/home/me/project-old/x');
    expect(workspacePath(`${CWD}/deep/x`, CWD)).toBe('deep/x');
  });

  test('a notebook edit is a change whose lines are said to be unavailable, never counted as zero silently', () => {
    const rec = changeRecordOf('t4', { notebook_path: `${CWD}/n.ipynb`, edit_mode: 'replace', new_source: 'print(1)' }, CWD)!;
    expect(rec.files[0]).toMatchObject({ path: 'n.ipynb', lines: 'unavailable' });
  });

  test('any other outcome is no change: a Bash result, a refused edit’s string', () => {
    expect(changeRecordOf('t5', { stdout: 'x', stderr: '', interrupted: false }, CWD)).toBeUndefined();
    expect(changeRecordOf('t6', 'Error: permission denied', CWD)).toBeUndefined();
    expect(asRecord(resultLine('t6', 'Error: permission denied')).parts.map((p) => p.k)).toEqual(['result']);
  });

  test('totals count change records (tool uses), not files; a record written twice counts once', () => {
    const edit = (id: string, file: string, lines: string[], seq: number) =>
      changesOfRecord(
        asRecord(resultLine(id, { filePath: `${CWD}/${file}`, structuredPatch: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines }] })),
        { seq, row: 1 },
      );
    const all = distinctChanges([...edit('a', 'x', ['-1', '+2'], 1), ...edit('b', 'x', ['+3'], 2), ...edit('a', 'x', ['-1', '+2'], 3)]);
    expect(changeTotals(all)).toEqual({ changes: 2, lines_added: 2, lines_removed: 1, files: 1 });
    const byTalk = totalsByTalk(all, (use) => (use === 'a' ? 'talk/1' : undefined));
    expect([...byTalk]).toEqual([['talk/1', { changes: 1, lines_added: 1, lines_removed: 1, files: 1 }]]);
  });

  test('who captured it, in asz’s words: a record landed with the earlier name `transcript` reads as claude-code', () => {
    const data = (captured_by: string) => ({
      schema: 'changes/1',
      id: 't9',
      captured_by,
      files: [{ path: 'a', operation: 'update', hunks: [], lines_added: 0, lines_removed: 0 }],
    });
    const read = (captured_by: string) =>
      changesOfRecord({ parts: [{ k: 'data', state: 'available', bytes: 1, data: data(captured_by) }] } as unknown as SdRecord, { seq: 1, row: 1 });
    expect(read('transcript')[0]!.captured_by).toBe('claude-code');
    expect(read('claude-code')[0]!.captured_by).toBe('claude-code');
    expect(changeRecordOf('t1', { filePath: `${CWD}/a`, structuredPatch: [] }, CWD)).toMatchObject({ captured_by: 'claude-code', basis: 'runtime_reported' });
  });

  test('the runtime’s record and the plugin’s of one call are two records, the runtime’s first; each observer’s copy counts once', () => {
    const rec = (captured_by: string, seq: number) =>
      changesOfRecord(
        {
          parts: [
            {
              k: 'data',
              state: 'available',
              bytes: 1,
              data: { schema: 'changes/1', id: 'e1', captured_by, files: [{ path: 'a', operation: 'update', hunks: [], lines_added: 1, lines_removed: 0 }] },
            },
          ],
        } as unknown as SdRecord,
        { seq, row: 1 },
      );
    const all = distinctChanges([...rec('asz-plugin', 2), ...rec('claude-code', 1), ...rec('claude-code', 3)]);
    expect(all.map((c) => [c.captured_by, c.ref.seq])).toEqual([
      ['claude-code', 1],
      ['asz-plugin', 2],
    ]);
  });
});

describe('an MCP call’s server and tool, split as mcp_endpoint.yaml reads them', () => {
  test('mcp__<server>__<tool> splits; anything else keeps the whole name as the tool', () => {
    expect(splitMcpName('mcp__lab__echo')).toEqual({ server: 'lab', tool: 'echo' });
    expect(splitMcpName('mcp__a__b__c')).toEqual({ tool: 'mcp__a__b__c' });
    expect(splitMcpName('mcp__lonely')).toEqual({ tool: 'mcp__lonely' });
    expect(splitMcpName('mcp____x')).toEqual({ tool: 'mcp____x' });
    expect(splitMcpName('Bash')).toBeUndefined();
  });

  test('outcome from the one result; duration only when both records are timed and in order', () => {
    const ok = { entry: { flags: [], time: 1500 }, part: {} };
    expect(mcpAttributes('mcp__s__t', { time: 1000 }, [ok])).toEqual({
      mcp_server: 's',
      mcp_tool: 't',
      outcome: 'returned',
      duration_ms: 500,
      duration_from: 'request_to_result_record',
    });
    expect(mcpAttributes('mcp__s__t', { time: 1000 }, [{ entry: { flags: ['interrupted'], time: 1200 }, part: { failed: true } }])?.outcome).toBe(
      'interrupted',
    );
    expect(mcpAttributes('mcp__s__t', { time: 2000 }, [{ entry: { flags: [], time: 1000 }, part: { failed: true } }])).toEqual({
      mcp_server: 's',
      mcp_tool: 't',
      outcome: 'failed',
    });
    expect(mcpAttributes('mcp__s__t', { time: 1000 }, [])).toEqual({ mcp_server: 's', mcp_tool: 't' });
  });
});
