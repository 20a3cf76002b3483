/**
 * What the page and the JSON API say while the storage root holds no conversation. It depends on
 * the mode: `aszcol view` on its own only reads, so the user must collect and parse; inside the
 * service that already happens at every pass, so the useful next step is a session, or the
 * command that connects Claude Code's telemetry.
 */
import type { ServiceDescription } from '../../component/component.js';
import { FILL_HINT } from './catalog.js';

export interface EmptyRootGuide {
  hint: string;
  /** One command to run next, shown as code on the page; absent when there is nothing to run. */
  next?: string;
}

export function emptyRootGuide(root: string, service: ServiceDescription | undefined): EmptyRootGuide {
  if (!service) return { hint: `No conversations under ${root} yet: ${FILL_HINT}.`, next: 'aszcol collect --once && aszcol parse' };
  const sources = service.receiving.map((r) => `${r.what} from ${r.from}`).join('; ');
  const collects = sources ? `The service lands ${sources} and assembles them at every pass` : 'This service has no receiver for Claude Code';
  return {
    hint: `No conversations under ${root} yet. ${collects}; a Claude Code session appears here within a pass of its first line.${
      service.connect ? " To add Claude Code's own telemetry (cost, durations, tool decisions), run the command below and start a new session." : ''
    }`,
    ...(service.connect ? { next: service.connect } : {}),
  };
}
