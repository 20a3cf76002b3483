/**
 * `aszcol verify`'s check of a session's provider bodies: every `provider_body/1` record, read in
 * landing order with the files before it (a cut body refers to earlier records by id and piece
 * digest), rebuilds to the size and SHA-256 its manifest claims. A body that does not says which
 * record and why — a reference to something not landed, a copy whose digest or length does not add
 * up, bytes changed since they landed.
 */
import { readSessionData } from '../formats/session-data/decode.js';
import { manifestOf } from '../formats/session-data/provider-body.js';
import { landedBodyFiles, SessionProviderBodies } from './provider-body-files.js';

/** What does not rebuild, one line a body; the count of bodies that do. */
export function verifyProviderBodies(root: string, session: string): { bodies: number; problems: string[] } {
  const files = landedBodyFiles(root, session);
  const reader = new SessionProviderBodies(files);
  const out = { bodies: 0, problems: [] as string[] };
  for (const f of files) {
    let records;
    try {
      records = readSessionData(f.path).records;
    } catch {
      continue; // a file that does not read is the file check's problem, named there
    }
    for (const [i, r] of records.entries()) {
      const m = manifestOf(r);
      if (!m) continue;
      try {
        reader.bodyAt(f.seq, i + 1);
        out.bodies++;
      } catch (err) {
        out.problems.push(`${f.path} row ${i + 1}: the ${m.role} body ${m.src ?? r.id ?? ''} does not rebuild: ${(err as Error).message}`);
      }
    }
  }
  return out;
}
