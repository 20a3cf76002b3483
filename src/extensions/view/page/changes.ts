/**
 * The Changes tab: what the conversation changed in its workspace, from `/api/c/{id}/changes`.
 * The conversation's totals first, then each talk's with its changes: the file, the operation,
 * +/− lines, who changed the proposal, and the diff. A change links to the step that made it.
 */
import type { ChangeEntry, ChangesAnswer } from '../changes.js';
import { h, type Child } from './dom.js';

const plusMinus = (t: { lines_added: number; lines_removed: number }): Child[] => [
  h('span', { class: 'diff-add' }, `+${t.lines_added}`),
  ' ',
  h('span', { class: 'diff-del' }, `−${t.lines_removed}`),
];

function diffBlock(c: ChangeEntry): HTMLElement {
  if (c.basis === 'tool_window')
    return h('p', { class: 'muted' }, 'Seen by the plugin’s look at the working directory before and after the command: sizes and times, no lines.');
  if (c.lines === 'unavailable') return h('p', { class: 'muted' }, 'The runtime’s record of this edit counts no lines (a notebook cell).');
  const pre = h('pre', { class: 'text diff' });
  for (const line of c.diff.split('\n'))
    pre.append(h('span', { class: line.startsWith('+') ? 'diff-add' : line.startsWith('-') ? 'diff-del' : line.startsWith('@@') ? 'muted' : '' }, `${line}\n`));
  return pre;
}

function who(c: ChangeEntry): string {
  const by = c.captured_by === 'claude-code' ? 'the runtime’s own patch' : 'seen by the plugin';
  if (c.user_modified === true) return `the agent proposed it and the person changed it · ${by}`;
  if (c.user_modified === false) return `the agent, as proposed · ${by}`;
  return by;
}

function changeCard(c: ChangeEntry): HTMLElement {
  return h(
    'details',
    { class: 'change' },
    h(
      'summary',
      null,
      h('span', { class: 'mono' }, c.file),
      ' ',
      h('span', { class: 'badge' }, c.operation),
      ' ',
      // A change whose lines nobody counted (a notebook cell, a shell command's scan) says so, never +0 −0.
      c.lines === 'unavailable' ? h('span', { class: 'muted' }, 'lines not counted') : plusMinus(c),
      ' ',
      c.step ? h('a', { href: '#', 'data-goto': c.step, class: 'muted' }, 'step') : h('span', { class: 'q-unresolved' }, c.unplaced ?? 'no step'),
    ),
    h('p', { class: 'muted' }, who(c)),
    diffBlock(c),
  );
}

/** `label(talkId)`: how the transcript names a talk. */
export function changesPanel(answer: ChangesAnswer | undefined, label: (talk: string) => string): HTMLElement {
  if (!answer) return h('p', { class: 'muted' }, 'Loading the workspace changes…');
  if (!answer.changes.length) return h('p', { class: 'muted' }, 'No workspace changes: no tool result in this conversation carries a patch.');
  const t = answer.totals;
  const talks = [...new Set(answer.changes.map((c) => c.talk))];
  return h(
    'div',
    { class: 'changes', 'aria-label': 'Workspace changes' },
    h('p', null, h('b', null, `${t.changes} change${t.changes === 1 ? '' : 's'}`), ` to ${t.files} file${t.files === 1 ? '' : 's'}, `, plusMinus(t)),
    talks.map((talk) => {
      const mine = answer.changes.filter((c) => c.talk === talk);
      const tt = answer.talks.find((x) => x.talk === talk)?.totals;
      return h(
        'section',
        { class: 'change-talk' },
        h(
          'h3',
          null,
          talk ? h('a', { href: '#', 'data-goto': talk }, label(talk)) : 'Not in a talk',
          tt ? [' · ', `${tt.changes} change${tt.changes === 1 ? '' : 's'} `, plusMinus(tt)] : null,
        ),
        mine.map(changeCard),
      );
    }),
  );
}
