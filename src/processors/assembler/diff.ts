import { canonical } from '../../formats/session-flow/encode.js';
import type { Fold } from '../../formats/session-flow/fold.js';
import type { Assembly, EntityFrame } from '../../formats/session-flow/types.js';

const bodyOf = (f: EntityFrame) => {
  const { t: _t, id: _id, revision: _r, tombstone: _x, ...body } = f as EntityFrame & Record<string, unknown>;
  return body;
};

/**
 * A round is the difference between the fold and a full assembly: an unchanged entity is left
 * out (absence means unchanged), a node or relation the assembly no longer produces gets a
 * tombstone, and an open unresolved entry it no longer produces is superseded as `resolved`.
 * Revision and frame type are not compared: only the writer sets them.
 */
export function diffAssembly(fold: Fold, a: Assembly, round: number): EntityFrame[] {
  const frames: EntityFrame[] = [];
  const emit = <T extends 'node' | 'relation' | 'unresolved'>(t: T, map: Map<string, object>) => {
    for (const [id, body] of map) {
      const prev = fold.entities.get(id);
      if (prev && prev.t === t && canonical(bodyOf(prev)) === canonical(body)) continue;
      frames.push({ t, id, revision: round, ...body } as EntityFrame);
    }
  };
  emit('node', a.nodes);
  emit('relation', a.relations);
  emit('unresolved', a.unresolved);
  for (const [id, prev] of fold.entities) {
    if (prev.t === 'node' && !a.nodes.has(id)) frames.push({ t: 'node', id, revision: round, tombstone: true });
    else if (prev.t === 'relation' && !a.relations.has(id)) frames.push({ t: 'relation', id, revision: round, tombstone: true });
    else if (prev.t === 'unresolved' && !a.unresolved.has(id) && prev.state === 'open') {
      frames.push({ ...(prev as EntityFrame), revision: round, state: 'resolved' } as EntityFrame);
    }
  }
  return frames;
}
