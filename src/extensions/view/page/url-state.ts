/**
 * What a conversation's URL holds: the talk, the step and the inspector's tab
 * (`/c/{id}?talk=…&step=…&tab=…`). A selection is a history entry, so Back returns to the step
 * before it, and a shared link opens on the same step.
 */
import type { UiState } from './model.js';

export interface ConversationUrl {
  talk?: string;
  step?: string;
  tab?: UiState['inspectorTab'];
}

/** The inspector's tabs in order, with their labels; the keys 1–6 choose them. */
export const INSPECTOR_TABS: [UiState['inspectorTab'], string][] = [
  ['details', 'Details'],
  ['relations', 'Relations'],
  ['evidence', 'Evidence'],
  ['raw', 'Raw'],
  ['execution', 'Execution'],
  ['prompt', 'Prompt'],
];
const TABS: readonly UiState['inspectorTab'][] = INSPECTOR_TABS.map(([id]) => id);

export function readConversationUrl(search: string): ConversationUrl {
  const p = new URLSearchParams(search);
  const out: ConversationUrl = {};
  const talk = p.get('talk'),
    step = p.get('step'),
    tab = p.get('tab');
  if (talk) out.talk = talk;
  if (step) out.step = step;
  if (tab && (TABS as readonly string[]).includes(tab)) out.tab = tab as UiState['inspectorTab'];
  return out;
}

/** The search part for a selection; other parameters (`poll`) are kept. The default tab is left out. */
export function conversationSearch(u: ConversationUrl, keep: string): string {
  const p = new URLSearchParams(keep);
  for (const k of ['talk', 'step', 'tab']) p.delete(k);
  if (u.talk) p.set('talk', u.talk);
  if (u.step && u.step !== u.talk) p.set('step', u.step);
  if (u.tab && u.tab !== 'details') p.set('tab', u.tab);
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Writes the selection into the URL: a new entry when it differs from the one shown, none when it is the same. */
export function recordSelection(u: ConversationUrl, push: boolean): void {
  const search = conversationSearch(u, location.search);
  if (search === location.search) return;
  const url = `${location.pathname}${search}${location.hash}`;
  if (push) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}
