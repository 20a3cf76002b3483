import { FIELDS, GLOSSARY_DIALECT, TERMS } from '../adapters/claude-code/glossary.js';
import { EXIT, type Io } from './context.js';

export function runGlossary(opts: { json?: boolean }, io: Io): number {
  if (opts.json) {
    io.out(JSON.stringify({ dialect: GLOSSARY_DIALECT, terms: TERMS, fields: FIELDS }));
    return EXIT.ok;
  }
  const named = Object.entries(TERMS).filter(([, t]) => t.native);
  const derived = Object.entries(TERMS).filter(([, t]) => !t.native);
  io.out(`dialect ${GLOSSARY_DIALECT}: ${Object.keys(TERMS).length} terms, ${named.length} that Claude Code names, ${derived.length} this project derives`);
  io.out('');
  io.out('named by Claude Code');
  for (const [k, t] of named) io.out(`  ${k.padEnd(22)} ${t.native!.padEnd(44)} ${t.where}${t.note ? ` — ${t.note}` : ''}`);
  io.out('');
  io.out('derived by this project');
  for (const [k, t] of derived) io.out(`  ${k.padEnd(22)} ${t.note ?? ''}`);
  return EXIT.ok;
}
