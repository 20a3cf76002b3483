import { TERMS } from '../adapters/claude-code/glossary.js';
import { loadChain } from '../storage/chain.js';
import type { EntityFrame } from '../formats/session-flow/types.js';
import { stringify as stringifyYaml } from 'yaml';
import { loadViewInput } from '../extensions/view/load.js';
import { buildViewWithPrompts } from '../extensions/view/prompts.js';
import { configFor, EXIT, type Io } from './context.js';
import { tokenWords, treeLines, treeTotal, viewNodesById, type NodeFrame } from './conversation-tree.js';
import type { ViewDocument } from '../formats/view/types.js';

type Terms = 'unified' | 'native' | 'both';

function name(kind: string, terms: Terms): string {
  const native = TERMS[kind]?.native;
  if (terms === 'unified' || !native) return kind;
  return terms === 'native' ? native : `${kind} (${native})`;
}

/** The asz.view document the page serves for this conversation, printed whole. */
function printView(root: string, id: string, as: 'json' | 'yaml', io: Io): number {
  let doc;
  try {
    doc = buildViewWithPrompts(loadViewInput(root, id));
  } catch (err) {
    io.err(`aszcol conversation: ${id}: ${(err as Error).message}`);
    return EXIT.problem;
  }
  io.out(as === 'json' ? JSON.stringify(doc) : stringifyYaml(doc, { aliasDuplicateObjects: false }).trimEnd());
  return EXIT.ok;
}

/** Folds a conversation's chain and prints it as a tree of talks, runs and steps, the main stream first. */
export function runConversation(id: string, opts: { config?: string; terms?: string; json?: boolean; yaml?: boolean; fold?: boolean }, io: Io): number {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  if ([opts.json, opts.yaml, opts.fold].filter(Boolean).length > 1) {
    io.err('aszcol conversation: give one of --json, --yaml and --fold');
    return EXIT.config;
  }
  if (opts.json || opts.yaml) return printView(cfg.storageRoot, id, opts.json ? 'json' : 'yaml', io);
  const terms = (opts.terms ?? 'unified') as Terms;
  if (!['unified', 'native', 'both'].includes(terms)) {
    io.err('aszcol conversation: --terms takes unified, native or both');
    return EXIT.config;
  }
  let chain;
  try {
    chain = loadChain(cfg.storageRoot, id);
  } catch (err) {
    io.err(`aszcol conversation: ${(err as Error).message}`);
    return EXIT.problem;
  }
  if (!chain.fold.head) {
    io.err(
      `aszcol conversation: ${id}: no rounds under ${cfg.storageRoot} (the storage root of ${cfg.source}; run aszcol collect --once and aszcol parse first, or pass --config)`,
    );
    return EXIT.problem;
  }
  const all = [...chain.fold.entities.values()];
  if (opts.fold) {
    io.out(JSON.stringify({ head: chain.fold.head, digest: chain.fold.headDigest, entities: all }));
    return EXIT.ok;
  }
  const h = chain.fold.head;
  io.out(`conversation ${id}  rounds ${chain.fold.rounds}  through seq ${h.through_seq}  ${h.title ? `"${h.title}"` : '(no title)'}`);
  io.out(
    `talks ${h.talks}  steps ${h.steps}  streams ${h.streams}  segments ${h.segments}  llm calls ${h.llm_calls}  subagents ${h.subagents}  bash runs ${h.bash_runs}`,
  );
  const nodes = all.filter((e): e is NodeFrame => e.t === 'node');
  // The texts and the usage live in the landed records; a conversation whose view cannot be built still prints its tree.
  let doc: ViewDocument | undefined;
  try {
    doc = buildViewWithPrompts(loadViewInput(cfg.storageRoot, id));
  } catch (err) {
    io.out(`(prompt text and tokens unavailable: ${(err as Error).message})`);
  }
  const views = viewNodesById(doc);
  if (doc) io.out(`total ${tokenWords(treeTotal(views))}`);
  for (const line of treeLines(nodes, { name: (kind) => name(kind, terms), views })) io.out(line);
  const rels = all.filter((e) => e.t === 'relation') as Extract<EntityFrame, { t: 'relation' }>[];
  if (rels.length) io.out(`relations (${rels.length}):`);
  for (const r of rels) io.out(`  ${name(r.type!, terms)}  ${r.from} → ${r.to}  ${r.quality}  via ${r.via}`);
  const unres = all.filter((e) => e.t === 'unresolved') as Extract<EntityFrame, { t: 'unresolved' }>[];
  const open = unres.filter((u) => u.state === 'open');
  io.out(`unresolved: ${open.length} still open, ${unres.length - open.length} resolved or terminal`);
  for (const u of unres) io.out(`  ${u.state}  ${u.kind}  ${u.ref}  ${u.reason}`);
  return EXIT.ok;
}
