/**
 * `provider_bodies_rebuild`: every body a call lists rebuilds, from the one provider file its ref
 * names (never a later one, as a reader loading bodies on demand reads them), to the exact bytes the
 * runtime wrote; and every call the runtime wrote bodies for lists both. Ground truth is the dump the
 * scenario wrote, not what was landed.
 */
import { readSessionData } from '../formats/session-data/decode.js';
import { manifestOf } from '../formats/session-data/provider-body.js';
import { SessionProviderBodies } from '../storage/provider-body-files.js';
import { entityId, type EntityFrame, type Ref } from '../formats/session-flow/types.js';
import { loadChain } from '../storage/chain.js';
import { listLanded } from '../storage/landed-files.js';
import { generate } from './generate.js';
import type { Scenario } from './model.js';
import { providerBodyFiles } from './provider-bodies.js';

export interface BodyViolation {
  where: string;
  expected: unknown;
  got: unknown;
}

type Node = Extract<EntityFrame, { t: 'node' }>;

export function providerBodiesRebuild(dir: string, session: string, scn: Scenario, at: number): BodyViolation[] {
  const written = providerBodyFiles(scn, generate(scn, { at, session }));
  if (written.size === 0) return [];
  const where = (s: string) => `provider_bodies_rebuild: ${s}`;
  const out: BodyViolation[] = [];
  const files = new Map(listLanded(dir, session).map((l) => [l.seq, l]));
  // Read as a reader on demand reads them: the files up to the one a ref names, never a later one.
  const bodies = new SessionProviderBodies([...files.values()].filter((l) => l.prefix === 'provider_body').map((l) => ({ seq: l.seq, path: l.path })));
  const calls = new Map<string, Node>();
  for (const e of loadChain(dir, session).fold.entities.values()) if (e.t === 'node' && e.kind === 'llm.call') calls.set(e.id, e);
  for (const line of (written.get('index.jsonl') ?? '').split('\n').filter(Boolean)) {
    const ix = JSON.parse(line) as { message_id: string; request_file: string; response_file: string };
    const id = entityId('call', ix.message_id);
    const listed = (calls.get(id)?.attrs?.provider_bodies ?? []) as { role: string; ref: Ref }[];
    for (const [role, file] of [
      ['request', ix.request_file],
      ['response', ix.response_file],
    ] as const) {
      const body = listed.find((b) => b.role === role);
      if (!body) {
        out.push({ where: where(`${id} ${role}`), expected: `lists ${file}`, got: calls.has(id) ? 'no such body listed' : 'no such call' });
        continue;
      }
      const landed = files.get(body.ref.seq);
      const record = landed ? readSessionData(landed.path).records[body.ref.row - 1] : undefined;
      if (!record || !manifestOf(record)) {
        out.push({
          where: where(`${id} ${role}`),
          expected: `a provider body at ${body.ref.seq}/${body.ref.row}`,
          got: landed ? 'no body record there' : 'no landed file',
        });
        continue;
      }
      let rebuilt: string;
      try {
        rebuilt = bodies.bodyAt(body.ref.seq, body.ref.row).toString('utf8');
      } catch (err) {
        out.push({ where: where(`${id} ${role}`), expected: file, got: (err as Error).message });
        continue;
      }
      if (rebuilt !== written.get(file)) out.push({ where: where(`${id} ${role}`), expected: `the bytes of ${file}`, got: 'other bytes' });
    }
  }
  return out;
}
