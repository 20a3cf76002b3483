/**
 * Plain words for how well a join is backed, with the glossary's definition for the hover. The
 * term itself stays in the markup (`data-quality`) and in the inspector's raw view.
 */
export const QUALITY_LABELS: Record<string, { label: string; definition: string }> = {
  exact_unique: { label: 'exact', definition: 'an identifier matched exactly one candidate' },
  exact_ambiguous: { label: 'ambiguous', definition: 'an identifier matched several; nothing chose one' },
  strong_inference: { label: 'inferred', definition: 'no identifier, but a well-founded structural argument' },
  weak_inference: { label: 'guessed', definition: 'plausible only' },
  unresolved: { label: 'unresolved', definition: 'no usable evidence; carried as an entry, never dropped' },
  conflict: { label: 'conflict', definition: 'sources disagree' },
};
