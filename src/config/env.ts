import { ConfigError } from '../util/errors.js';

const REF = /\$\$|\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE = /^\$\{env:[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

/**
 * A value that is exactly one reference takes the type its text reads as, the way the
 * collector's confmap does, so `workers: ${env:WORKERS}` gives an integer. Only plain forms are
 * typed; anything else stays text.
 */
function typed(text: string): unknown {
  if (/^-?(0|[1-9]\d*)(\.\d+)?$/.test(text)) return Number(text);
  if (text === 'true') return true;
  if (text === 'false') return false;
  return text;
}

/**
 * Expands `${env:VAR}` and `${env:VAR:-default}` in every string of a parsed configuration;
 * `$$` is a literal `$`. An unset (or empty) variable without a default is an error at its path.
 */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') {
    const out = value.replace(REF, (m, name: string | undefined, def: string | undefined) => {
      if (m === '$$') return '$';
      const v = env[name!];
      if (v !== undefined && v !== '') return v;
      if (def !== undefined) return def;
      throw new ConfigError(path || '(root)', `environment variable ${name} is not set and no default is given (write \${env:${name}:-default})`);
    });
    return WHOLE.test(value) ? typed(out) : out;
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandEnv(v, env, path ? `${path}.${k}` : k)]));
  }
  return value;
}
