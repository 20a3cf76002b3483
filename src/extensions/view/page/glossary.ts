/**
 * The glossary's definitions, as the server put them in the page (a JSON data block beside the
 * markup, see `../page-html.ts`): read once, on first use. A page without the block (an old
 * server) gets no definitions and says so on hover rather than showing a stale copy.
 */
const ELEMENT_ID = 'aszcol-glossary';

function readDefinitions(): Map<string, string> {
  const text = document.getElementById(ELEMENT_ID)?.textContent;
  if (!text) return new Map();
  try {
    const parsed = JSON.parse(text) as { definitions?: Record<string, unknown> };
    return new Map(Object.entries(parsed.definitions ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return new Map();
  }
}

/** Made once per page load; the block never changes while the page is open. */
const definitions = ((): (() => Map<string, string>) => {
  let read: Map<string, string> | undefined;
  return () => (read ??= readDefinitions());
})();

/** The glossary's definition of a term, or undefined when the server sent none. */
export function definitionOf(term: string): string | undefined {
  return definitions().get(term);
}
