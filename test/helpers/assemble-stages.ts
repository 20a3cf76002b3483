/**
 * Assembly's stages run one by one, as `assemble` runs them, with the last one given: for tests
 * that compare two ways of doing that last step on the same stages 1–8.
 */
import { emitStructure, openContext } from '../../src/assemble/assemble.js';
import { addNode, type AssemblyContext } from '../../src/assemble/context.js';
import type { ToolUse } from '../../src/assemble/stage4-tools.js';
import { canonical } from '../../src/formats/session-flow/encode.js';
import { entityId } from '../../src/formats/session-flow/types.js';
import type { IndexEntry } from '../../src/storage/index.js';

/** Stages 1–8 of assembly, as `assemble` runs them, then the given join. */
export function assembleWith(session: string, entries: IndexEntry[], join: (ctx: AssemblyContext, uses: Map<string, ToolUse>) => void): AssemblyContext['out'] {
  const ctx = openContext(session, session, entries);
  addNode(ctx, entityId('session', session), { kind: 'session' });
  join(ctx, emitStructure(ctx));
  return ctx.out;
}

/** Every entity as its canonical bytes, by id. */
export const entities = (out: AssemblyContext['out']): Record<string, string> =>
  Object.fromEntries(
    [...out.nodes, ...out.relations, ...out.unresolved].map(([id, body]): [string, string] => [id, canonical(body)]).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
