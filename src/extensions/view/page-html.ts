/**
 * The page's HTML as served: the markup with the glossary's definitions in a JSON data block, so
 * the hover text of a quality is the glossary's own words (one source: `aszcol glossary`,
 * `/api/glossary` and the page all read `adapters/claude-code/glossary.ts`).
 */
import { GLOSSARY_DIALECT, TERMS } from '../../adapters/claude-code/glossary.js';
import { PAGE_HTML } from './assets.js';

/** The data block's element id; the page reads it by this name (`page/glossary.ts`). */
export const GLOSSARY_ELEMENT_ID = 'aszcol-glossary';

/** Every term's definition: its note, or where the runtime writes it when there is no note. */
export function glossaryDefinitions(): Record<string, string> {
  return Object.fromEntries(Object.entries(TERMS).map(([term, t]) => [term, t.note ?? t.where]));
}

export function pageHtml(): string {
  // "<" escaped so no definition can close the script element early.
  const json = JSON.stringify({ dialect: GLOSSARY_DIALECT, definitions: glossaryDefinitions() }).replace(/</g, '\\u003c');
  const block = `<script type="application/json" id="${GLOSSARY_ELEMENT_ID}">${json}</script>\n`;
  if (!PAGE_HTML.includes('</head>')) throw new Error('the page markup has no </head> to put the glossary before');
  return PAGE_HTML.replace('</head>', `${block}</head>`);
}
