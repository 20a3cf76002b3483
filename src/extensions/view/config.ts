import { endpoint, formatEndpoint, join, mapping, str } from '../../config/reader.js';
import { distinctNames } from '../../config/name-list.js';
import { allowedHosts } from '../../component/http.js';
import { WITHHOLD_CATEGORIES, type WithholdCategory } from '../../formats/view/withhold.js';

export interface ViewConfig {
  /** `host:port`, as the collector writes listen addresses; port 0 takes any free port. */
  endpoint: string;
  /** Host names answered beyond IP literals, localhost and the bound host (component/http.ts). */
  allowedHosts: string[];
  /**
   * Where the list keeps each conversation's row facts between starts (row-facts-store.ts): a
   * directory, `""` for `$XDG_CACHE_HOME/aszcol/view/<root's hash>`, `off` (or unset) for none.
   */
  cacheDir?: string;
  /** What the page and the JSON API withhold from every reader (formats/view/withhold.ts); absent when nothing is. */
  hide?: WithholdCategory[];
}

export const VIEW_DEFAULT_ENDPOINT = '127.0.0.1:8787';

export function defaultViewConfig(): ViewConfig {
  return { endpoint: VIEW_DEFAULT_ENDPOINT, allowedHosts: [], cacheDir: '' };
}

/**
 * `extensions.view`: `endpoint`, `allowed_hosts`, `cache_dir` and `hide`. Absent or null means the default. Throws ConfigError at the
 * exact path of the value that is wrong.
 */
export function validateViewConfig(raw: unknown, path: string): ViewConfig {
  const m = mapping(raw, path, ['endpoint', 'allowed_hosts', 'cache_dir', 'hide']);
  const hide = withholdList(m.hide, join(path, 'hide'));
  return {
    endpoint: formatEndpoint(endpoint(m.endpoint, join(path, 'endpoint'), VIEW_DEFAULT_ENDPOINT)),
    allowedHosts: allowedHosts(m.allowed_hosts, path),
    cacheDir: str(m.cache_dir, join(path, 'cache_dir'), ''),
    ...(hide.length ? { hide } : {}),
  };
}

/** A `hide` list: known category names, each once; every error at the item's exact path. */
export function withholdList(v: unknown, path: string): WithholdCategory[] {
  return distinctNames(v, path, WITHHOLD_CATEGORIES, 'a category that can be withheld');
}
