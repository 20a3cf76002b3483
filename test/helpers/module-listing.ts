import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a listed module's line on stderr starts with. */
export const LOADED_MARK = 'ASZ-TEST-LOADED ';

/** A NODE_OPTIONS `--import` that prints every module the process loads to stderr, marked. */
export function moduleListing(dir: string): string {
  const hooks = join(dir, 'list-hooks.mjs');
  writeFileSync(
    hooks,
    `import { writeSync } from 'node:fs';\nexport async function load(url, context, next) { writeSync(2, ${JSON.stringify(LOADED_MARK)} + url + '\\n'); return next(url, context); }\n`,
  );
  const register = join(dir, 'list-register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify('file://' + hooks)});\n`);
  return `--import=${register}`;
}

/** A run's stderr split into the modules it loaded and what it wrote itself. */
export function splitListing(stderr: string): { loaded: string[]; stderr: string } {
  const lines = stderr.split('\n');
  return {
    loaded: lines.filter((l) => l.startsWith(LOADED_MARK)).map((l) => l.slice(LOADED_MARK.length)),
    stderr: lines.filter((l) => !l.startsWith(LOADED_MARK)).join('\n'),
  };
}
