/**
 * A scenario tool's `changes` as Claude Code records them for its own editing tools: the
 * `toolUseResult` of an `Edit` (the strings, the original file and the patch it computed) or a
 * `Write` (`create` with the content, or `update` with the patch). The patch is one hunk per change
 * around the lines that differ, with up to three lines of context, as a unified diff gives them.
 */
export interface ScenarioChange {
  path: string;
  before: string;
  after: string;
}

/** The tools whose changes the runtime itself records; any other tool's change only a plugin sees. */
export const EDITING_TOOLS: ReadonlySet<string> = new Set(['Edit', 'Write', 'MultiEdit']);

const CONTEXT = 3;

function linesOf(text: string): string[] {
  const l = text.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

/** The hunk that turns `before` into `after`: the differing middle, framed by shared lines. */
export function patchOf(before: string, after: string): { oldStart: number; oldLines: number; newStart: number; newLines: number; lines: string[] }[] {
  const a = linesOf(before),
    b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  if (head === a.length && head === b.length) return [];
  const pre = Math.min(CONTEXT, head),
    post = Math.min(CONTEXT, tail);
  const lines = [
    ...a.slice(head - pre, head).map((l) => ` ${l}`),
    ...a.slice(head, a.length - tail).map((l) => `-${l}`),
    ...b.slice(head, b.length - tail).map((l) => `+${l}`),
    ...a.slice(a.length - tail, a.length - tail + post).map((l) => ` ${l}`),
  ];
  const oldLines = a.length - head - tail + pre + post,
    newLines = b.length - head - tail + pre + post;
  return [{ oldStart: oldLines ? head - pre + 1 : head, oldLines, newStart: newLines ? head - pre + 1 : head, newLines, lines }];
}

/** What the runtime writes as the result's `toolUseResult` for an editing tool's one change. */
export function editOutcome(tool: string, change: ScenarioChange, cwd: string): Record<string, unknown> {
  const filePath = change.path.startsWith('/') ? change.path : `${cwd}/${change.path}`;
  const structuredPatch = patchOf(change.before, change.after);
  if (tool === 'Write')
    return change.before === ''
      ? { type: 'create', filePath, content: change.after, structuredPatch: [], originalFile: null }
      : { type: 'update', filePath, content: change.after, structuredPatch, originalFile: change.before };
  // Edit and MultiEdit: the strings replaced, as the smallest span that differs.
  const removed = structuredPatch[0]?.lines.filter((l) => l.startsWith('-')).map((l) => l.slice(1)) ?? [];
  const added = structuredPatch[0]?.lines.filter((l) => l.startsWith('+')).map((l) => l.slice(1)) ?? [];
  return {
    filePath,
    oldString: removed.join('\n'),
    newString: added.join('\n'),
    originalFile: change.before,
    structuredPatch,
    userModified: false,
    replaceAll: false,
  };
}
