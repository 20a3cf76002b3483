/**
 * The document the view serves for a conversation, from a storage root alone: the `asz.view`
 * build plus the title the page shows (the runtime's, else the first prompt). One function, so
 * anything that rebuilds a conversation from the same files (the test OAP's view route) gets the
 * same document the page does.
 */
import type { ViewDocument } from '../../formats/view/types.js';
import { loadViewInput } from './load.js';
import { buildViewWithPrompts } from './prompts.js';
import { rowFacts, type RowFacts } from './row-facts.js';

export function servedView(root: string, conversation: string): { doc: ViewDocument; facts: RowFacts } {
  const input = loadViewInput(root, conversation);
  const doc = buildViewWithPrompts(input);
  const facts = rowFacts(root, input, doc);
  if (doc.summary.title) Object.assign(doc.summary, { title_from: 'runtime' });
  else if (facts.first_prompt) Object.assign(doc.summary, { title: facts.first_prompt, title_from: 'prompt' });
  // Whole, as built: what a view configured to withhold removes is counted there (extensions/view/withheld-api.ts).
  Object.assign(doc.summary, { withheld: {} });
  return { doc, facts };
}
