/**
 * Plain words for how well a join is backed. The definition shown on hover is not here: it is the
 * glossary's, which the server puts in the page (`glossary.ts`). The term itself stays in the
 * markup (`data-quality`) and in the inspector's raw view.
 */
export const QUALITY_LABELS: Record<string, string> = {
  exact_unique: 'exact',
  exact_ambiguous: 'ambiguous',
  strong_inference: 'inferred',
  weak_inference: 'guessed',
  unresolved: 'unresolved',
  conflict: 'conflict',
};
