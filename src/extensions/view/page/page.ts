import type { ViewStatus } from '../catalog.js';

/** What the entry (app.ts) drives: the list or one conversation. */
export interface Page {
  /** Every poll's answer: a page that sees its own data moved fetches again and redraws, keeping what the reader had open. */
  observe(status: ViewStatus): Promise<void>;
}
