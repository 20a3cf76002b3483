/**
 * A failed provider attempt as Claude Code records it in the transcript (`system/api_error`,
 * measured with 2.1.328 through ../shared/lab: the mock answered 529, then 500, then the call):
 * `error.status`, `error.requestId` (the failed request's own id), `retryAttempt`, `retryInMs`.
 * The runtime sends no `api_error` event for an attempt it retries; this record, in the parent
 * chain right above the call that finally answered, is what says the call failed first.
 */
import type { Figures } from '../../storage/index-figures.js';

export interface FailedAttempt {
  attempt?: number;
  statusCode?: number;
  /** The failed request's id, which is not the answered call's. */
  request?: string;
  retryInMs?: number;
  error?: string;
}

export function readFailedAttempt(figures: Figures): FailedAttempt {
  const out: FailedAttempt = {};
  let formatted: string | undefined;
  for (let i = 0; i < figures.count; i++) {
    const key = figures.key(i),
      value = figures.value(i);
    if (key === 'retryAttempt' && typeof value === 'number') out.attempt = value;
    else if (key === 'error.status' && typeof value === 'number') out.statusCode = value;
    else if (key === 'error.requestId' && typeof value === 'string' && value) out.request = value;
    else if (key === 'retryInMs' && typeof value === 'number') out.retryInMs = value;
    else if (key === 'error.formatted' && typeof value === 'string' && value) formatted = value;
  }
  if (formatted) out.error = formatted;
  return out;
}
