import { ConfigError } from '../util/errors.js';

const REF = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Expands `${env:VAR}` and `${env:VAR:-default}` in every string of a parsed configuration. */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(REF, (_m, name: string, def: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (def !== undefined) return def;
      throw new ConfigError(path || '(root)', `environment variable ${name} is not set and no default is given (write \${env:${name}:-default})`);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandEnv(v, env, path ? `${path}.${k}` : k)]));
  }
  return value;
}
