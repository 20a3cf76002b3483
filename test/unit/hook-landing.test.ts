/**
 * The hook spool as an intake queue: what the plugin's hooks spooled for a session lands as
 * Session Data beside its transcript, one file per stream and kind per pass (an MCP call's
 * observations as `execution`, every other as `changes`), each line once, numbered as if the
 * stream's lines of that kind were a file of their own, so `verify`, the rounds and `push` treat
 * them like any landed file. What cannot land yet waits in the spool and the pass says why.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { chmodSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { observeHookInput, type HookObservation } from '../../src/adapters/claude-code/hook-event.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { parseSession } from '../../src/processors/assembler/parse.js';
import { loadHookCursor, readObservations, spoolPath } from '../../src/storage/hook-landing.js';
import { appendSpoolLineSync, readSpool } from '../../src/storage/hook-spool.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { loadChain } from '../../src/storage/chain.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { verifyChains } from '../../src/storage/verify-chain.js';
import { bench, SID } from '../helpers/collect.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { cleanupTemp } from '../helpers/tmp.js';

afterAll(cleanupTemp);

let clock = 0;
/** One hook's observation, reduced by the hook's own code from the input Claude Code would give it. */
function observed(input: Record<string, unknown>): HookObservation {
  return observeHookInput(Buffer.from(JSON.stringify({ session_id: SID, cwd: '/w', ...input })), new Date(Date.UTC(2026, 11, 1, 10, 0, clock++)).toISOString());
}
const mcp = (tool: string, event = 'PostToolUse', extra: Record<string, unknown> = {}) =>
  observed({ hook_event_name: event, tool_name: 'mcp__status__lookup', tool_use_id: tool, tool_input: { q: tool }, duration_ms: 30, ...extra });
const bash = (tool: string, event = 'PostToolUse', extra: Record<string, unknown> = {}) =>
  observed({ hook_event_name: event, tool_name: 'Bash', tool_use_id: tool, tool_input: { command: 'make' }, ...extra });

function spool(root: string, ...obs: HookObservation[]): void {
  for (const o of obs) appendSpoolLineSync(root, o.session, JSON.stringify(o));
}

/** A session whose transcript landed: the conversation the observations sit beside. */
function landedSession() {
  const b = bench();
  writeLines(b.main, [rec.user(SID, 'look it up'), rec.assistant(SID, 'msg_1', [{ type: 'text', text: 'ok' }])]);
  expect(b.pass().errors).toEqual([]);
  return b;
}

const pluginFiles = (root: string) => listLanded(root, SID).filter((f) => f.prefix === 'changes' || f.prefix === 'execution');

describe('spooled observations of a landed session', () => {
  test('land once each, per stream and kind, numbered as their own source, and the spool is recorded as read', () => {
    const b = landedSession();
    const lines = [mcp('m1', 'PreToolUse'), bash('b1', 'PreToolUse'), mcp('m1'), bash('b1'), bash('c1', 'PostToolUse', { agent_id: 'helper-1' })];
    spool(b.root, ...lines);
    const r = b.pass();
    expect(r.errors).toEqual([]);
    expect(r.hooks).toEqual({ landed: 5, skipped: 0, waiting: [] });
    const files = pluginFiles(b.root).map((f) => ({ f, ...readSessionData(f.path) }));
    expect(files.map(({ header: h }) => `${h.stream} ${h.kind} ${h.dialect} ${h.src}`).sort()).toEqual([
      `helper-1 changes aszcol-hook/1 _hooks/spool/${SID}.jsonl`,
      `main changes aszcol-hook/1 _hooks/spool/${SID}.jsonl`,
      `main execution aszcol-hook/1 _hooks/spool/${SID}.jsonl`,
    ]);
    const exec = files.find((x) => x.header.kind === 'execution')!;
    // In spool order; ord and off count the stream's execution lines only; the line whole is the data part; no `from`: no node.
    expect(exec.records.map((x) => [x.ord, x.id, x.tool, x.from, x.parts[0]!.k])).toEqual([
      [1, lines[0]!.id, 'm1', undefined, 'data'],
      [2, lines[2]!.id, 'm1', undefined, 'data'],
    ]);
    expect(exec.records[1]!.off).toBe(exec.records[0]!.bytes + 1);
    expect(exec.records.map((x) => x.parts[0]!.data)).toEqual([lines[0], lines[2]]);
    expect(loadHookCursor(b.root, SID)!.offset).toBe(statSync(spoolPath(b.root, SID)).size);
    expect(verifyRoot(b.root).problems).toEqual([]);

    // A second pass finds nothing new: nothing lands, nothing is said.
    const again = b.pass();
    expect(again.hooks).toBeUndefined();
    expect(pluginFiles(b.root)).toHaveLength(3);
  });

  test('one collector across passes: a spool it saw fully landed is passed over until it grows, then lands again', () => {
    const b = landedSession();
    const collector = b.collector();
    spool(b.root, mcp('m1'));
    expect(collector.pass().hooks).toMatchObject({ landed: 1 });
    expect(collector.pass().hooks).toBeUndefined();
    expect(collector.pass().hooks).toBeUndefined();
    spool(b.root, mcp('m2'), bash('b2'));
    expect(collector.pass().hooks).toMatchObject({ landed: 2 });
    expect(readObservations(b.root, SID)).toMatchObject({ landed: 3, notLanded: 0 });
  });

  test('a line appended later lands in a new file that continues its stream’s count; verify finds no gap', () => {
    const b = landedSession();
    spool(b.root, mcp('m1', 'PreToolUse'), mcp('m1'));
    b.pass();
    spool(b.root, mcp('m2'));
    expect(b.pass().hooks).toMatchObject({ landed: 1 });
    const exec = pluginFiles(b.root)
      .filter((f) => f.prefix === 'execution')
      .map((f) => readSessionData(f.path).records);
    expect(exec.map((rs) => rs.map((x) => x.ord))).toEqual([[1, 2], [3]]);
    expect(exec[1]![0]!.off).toBe(exec[0]![1]!.off + exec[0]![1]!.bytes + 1);
    expect(verifyRoot(b.root).problems).toEqual([]);
  });

  test('the rounds bind them: a parse covers their sequences, and a lost one is a problem verify names', () => {
    const b = landedSession();
    spool(b.root, mcp('m1'), bash('b1'));
    b.pass();
    expect(parseSession({ root: b.root, session: SID, maxRoundBytes: 1 << 20 }).status).toBe('written');
    const files = pluginFiles(b.root);
    expect(loadChain(b.root, SID).fold.head!.through_seq).toBe(Math.max(...files.map((f) => f.seq)));
    expect(verifyChains(b.root, SID).problems).toEqual([]);
    const lost = files.find((f) => f.prefix === 'execution')!;
    chmodSync(lost.path, 0o644);
    rmSync(lost.path);
    expect(verifyChains(b.root, SID).problems).toEqual([expect.stringMatching(new RegExp(`landed sequence\\(s\\) ${lost.seq} are not on disk`))]);
    // The stream's execution cursor says a line was read that no file holds now.
    expect(verifyRoot(b.root).problems).toEqual([
      expect.stringMatching(/end gap in execution: the records reach byte 0 \(ord 0\), the cursor has read to \d+ \(ord 1\)/),
    ]);
  });

  test('the view reads landed records, and the spool only for lines not landed yet', () => {
    const b = landedSession();
    spool(b.root, mcp('m1'), bash('b1'));
    b.pass();
    spool(b.root, mcp('m2'));
    const read = readObservations(b.root, SID);
    expect({ landed: read.landed, notLanded: read.notLanded }).toEqual({ landed: 2, notLanded: 1 });
    expect(read.lines.map((l) => (l.value as HookObservation).tool).sort()).toEqual(['b1', 'm1', 'm2']);
  });

  test('a pass that dies after installing the files and before moving any cursor is finished by the next, landing nothing twice', () => {
    const b = landedSession();
    spool(b.root, mcp('m1', 'PreToolUse'), mcp('m1'), bash('b1'));
    const died = b.pass({
      afterHookLand: () => {
        throw new Error('killed');
      },
    });
    expect(died.errors.map((e) => e.message)).toEqual(['killed']);
    expect(pluginFiles(b.root)).toHaveLength(2); // installed, not counted by any cursor
    expect(loadHookCursor(b.root, SID)).toBeUndefined();
    spool(b.root, mcp('m2'));
    const next = b.pass();
    expect(next.hooks).toEqual({ landed: 1, skipped: 3, waiting: [] });
    const ids = pluginFiles(b.root).flatMap((f) => readSessionData(f.path).records.map((x) => x.id));
    expect(ids.sort()).toEqual(
      readSpool(b.root, SID)
        .map((l) => (l.value as HookObservation).id)
        .sort(),
    );
    const v = verifyRoot(b.root);
    expect(v.problems).toEqual([]);
    expect(v.relanded).toBe(0);
  });
});

describe('observations that cannot land yet', () => {
  test('wait in the spool with the reason: a session with no conversation, and observations that name no session', () => {
    const b = landedSession();
    const ghost = '9d9f07e1-2696-40b4-87af-eab2d03b4e01';
    spool(b.root, { ...mcp('g1'), session: ghost });
    appendSpoolLineSync(b.root, undefined, JSON.stringify({ ...bash('u1'), session: undefined }));
    const r = b.pass();
    expect(r.errors).toEqual([]);
    expect(r.hooks?.waiting).toEqual([
      { spool: `${ghost}.jsonl`, reason: expect.stringMatching(/no conversation landed yet/) },
      { spool: '_unplaced.jsonl', reason: expect.stringMatching(/1 observation\(s\) name no usable session id/) },
    ]);
    expect(existsSync(join(b.root, ghost))).toBe(false);
    // Once the session's transcript lands, so do its observations.
    writeLines(join(b.src, '-Users-me-work', `${ghost}.jsonl`), [rec.user(ghost, 'hi')]);
    b.pass();
    expect(listLanded(b.root, ghost).map((f) => f.prefix)).toEqual(['transcript', 'execution']);
    expect(readFileSync(spoolPath(b.root, ghost), 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });
});
