import { entityId } from '../formats/session-flow/types.js';
import type { IndexEntry } from '../storage/index.js';
import { addNode, addRelation, addUnresolved, has, locId, refOf, type AssemblyContext } from './context.js';

/**
 * Stage 6, first half: each stream's epochs, cut only at an explicit reset record (recognised by
 * its flag, which the adapter sets from the record's subtype, never from text), in landed order.
 * The reset record opens the new epoch; a stream that starts with one has no epoch `0`.
 */
export function computeEpochs(ctx: AssemblyContext): void {
  for (const s of ctx.streams.values()) {
    let current = entityId('epoch', s.name, '0');
    for (const e of s.records) {
      if (has(e, 'context_reset')) current = entityId('epoch', s.name, e.id ?? `at_${e.seq}_${e.row}`);
      ctx.epochOf.set(e, current);
    }
  }
}

/**
 * Stage 6, second half: epoch nodes, the boundary and summary steps, `follows` from the new epoch
 * to the one holding the record the reset continues from, `summarizes` from the summary to its
 * boundary. A reset naming a record that never landed is an open `epoch_continuation`.
 */
export function emitEpochs(ctx: AssemblyContext): void {
  for (const s of ctx.streams.values()) {
    if (!s.records.length) continue;
    // A stream whose first record is a reset has no epoch before it: the reset opens its only first epoch.
    if (!has(s.records[0]!, 'context_reset'))
      addNode(ctx, entityId('epoch', s.name, '0'), { kind: 'epoch', parent: entityId('stream', s.name), stream: s.name, ref: refOf(s.records[0]!) });
    for (const e of s.records) {
      if (!has(e, 'context_reset')) continue;
      const epoch = ctx.epochOf.get(e)!;
      addNode(ctx, epoch, { kind: 'epoch', parent: entityId('stream', s.name), stream: s.name, ref: refOf(e) });
      addNode(ctx, locId('boundary', e), { kind: 'epoch.boundary', parent: epoch, stream: s.name, ref: refOf(e) });
      if (e.continues) {
        const target = ctx.byId.get(e.continues);
        const targetEpoch = target ? ctx.epochOf.get(target) : undefined;
        if (targetEpoch && targetEpoch !== epoch) addRelation(ctx, 'follows', epoch, targetEpoch, 'exact_unique', 'explicit context reset', [refOf(e)]);
        else if (!target) addUnresolved(ctx, 'epoch_continuation', e.continues, 'the reset continues from a record that is not in the landed data');
      }
    }
    for (const e of s.records) {
      if (!has(e, 'reset_summary')) continue;
      const epoch = ctx.epochOf.get(e)!;
      const id = locId('summary', e);
      addNode(ctx, id, { kind: 'epoch.summary', parent: epoch, stream: s.name, ref: refOf(e) });
      const boundary = e.parent ? ctx.byId.get(e.parent) : undefined;
      if (boundary && has(boundary, 'context_reset'))
        addRelation(ctx, 'summarizes', id, locId('boundary', boundary), 'exact_unique', 'containment parent', [refOf(e)]);
    }
  }
}

/** The records that are epoch steps rather than steps of a run. */
export const isEpochStep = (e: IndexEntry) => has(e, 'context_reset') || has(e, 'reset_summary');
