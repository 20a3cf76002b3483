import { afterAll, describe, expect, test } from '@jest/globals';
import { rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { bench, PROJECT, SID } from '../helpers/collect.js';
import { landedFiles } from '../helpers/root.js';
import { cleanupTemp } from '../helpers/tmp.js';
import { SessionCursors } from '../../src/storage/session-cursors.js';

afterAll(cleanupTemp);

describe('snapshot cursors', () => {
  test('a manifest rewritten as its run goes on lands one immutable version per change', () => {
    const b = bench();
    const dir = join(b.src, PROJECT, SID, 'workflows');
    mkdirSync(dir, { recursive: true });
    const m = join(dir, 'wf_abc-123.json');
    writeFileSync(m, JSON.stringify({ workflowName: 'review', status: 'running' }));
    expect(b.pass().landedFiles).toBe(1);
    writeFileSync(m, JSON.stringify({ workflowName: 'review', status: 'running' }) + '\n\n'); // trailing newlines are not a change
    expect(b.pass().landedFiles).toBe(0);
    writeFileSync(m, JSON.stringify({ workflowName: 'review', status: 'completed', durationMs: 5 }));
    expect(b.pass().landedFiles).toBe(1);
    const files = landedFiles(b.root, SID);
    expect(files.map((f) => f.header.kind)).toEqual(['workflow_manifest', 'workflow_manifest']);
    expect(files.map((f) => f.records[0]!.label)).toEqual(['review', 'review']);
    expect(files[1]!.records[0]).toMatchObject({ ord: 1, off: 0, batch: 'wf_abc-123' });
    expect(files[1]!.header).toMatchObject({ batch: 'wf_abc-123' });
    expect(files[1]!.header.stream).toBeUndefined();
    writeFileSync(m, '');
    expect(b.pass().landedFiles).toBe(0); // an empty file lands nothing
    rmSync(m);
    expect(b.pass().sourceGone).toBe(1);
    expect(SessionCursors.read(b.root, SID).get('runs/wf_abc-123/manifest')!.state).toBe('source_gone');
  });

  test('a sidecar lands with its child, label and the call it answers', () => {
    const b = bench();
    const dir = join(b.src, PROJECT, SID, 'subagents');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'agent-a687426e8a37aa323.meta.json'), JSON.stringify({ description: 'helper task', toolUseId: 'toolu_1' }));
    b.pass();
    const [f] = landedFiles(b.root, SID);
    expect(f!.header).toMatchObject({ kind: 'agent_meta', stream: 'a687426e8a37aa323' });
    expect(f!.records[0]).toMatchObject({ child: 'a687426e8a37aa323', label: 'helper task', tool: 'toolu_1', from: 'runtime' });
  });
});
