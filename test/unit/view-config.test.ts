import { describe, expect, test } from '@jest/globals';
import { defaultViewConfig, validateViewConfig } from '../../src/extensions/view/config.js';
import { ConfigError } from '../../src/util/errors.js';

function problem(raw: unknown): { path: string; reason: string } {
  try {
    validateViewConfig(raw, 'extensions.view');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return { path: (err as ConfigError).path, reason: (err as ConfigError).reason };
  }
  throw new Error('expected a ConfigError');
}

describe('extensions.view', () => {
  test('absent, null or empty means 127.0.0.1:8787', () => {
    expect(defaultViewConfig()).toEqual({ endpoint: '127.0.0.1:8787', allowedHosts: [], cacheDir: '' });
    for (const raw of [undefined, null, {}])
      expect(validateViewConfig(raw, 'extensions.view')).toEqual({ endpoint: '127.0.0.1:8787', allowedHosts: [], cacheDir: '' });
  });

  test("an endpoint is kept in the collector's host:port form", () => {
    expect(validateViewConfig({ endpoint: '0.0.0.0:9000' }, 'extensions.view')).toEqual({ endpoint: '0.0.0.0:9000', allowedHosts: [], cacheDir: '' });
    expect(validateViewConfig({ endpoint: '[::1]:0' }, 'extensions.view')).toEqual({ endpoint: '[::1]:0', allowedHosts: [], cacheDir: '' });
    expect(validateViewConfig({ endpoint: ':8787' }, 'extensions.view')).toEqual({ endpoint: '0.0.0.0:8787', allowedHosts: [], cacheDir: '' });
  });

  test('the list cache: a directory, "" for the XDG cache (the default), off for none', () => {
    expect(validateViewConfig({ cache_dir: '/var/cache/aszcol' }, 'extensions.view').cacheDir).toBe('/var/cache/aszcol');
    expect(validateViewConfig({ cache_dir: 'off' }, 'extensions.view').cacheDir).toBe('off');
  });

  test('each mistake is refused at its exact path', () => {
    expect(problem({ endpoint: '8787' })).toMatchObject({ path: 'extensions.view.endpoint', reason: expect.stringMatching(/not a listen address/) });
    expect(problem({ endpoint: '127.0.0.1:70000' })).toMatchObject({ path: 'extensions.view.endpoint', reason: expect.stringMatching(/out of range/) });
    expect(problem({ endpoint: '' })).toMatchObject({ path: 'extensions.view.endpoint' });
    expect(problem({ endpoint: [1] })).toMatchObject({ path: 'extensions.view.endpoint', reason: expect.stringMatching(/must be a string/) });
    expect(problem({ listen: '127.0.0.1:1' })).toEqual({
      path: 'extensions.view.listen',
      reason: 'unknown key; allowed here: endpoint, allowed_hosts, cache_dir, hide',
    });
    expect(problem({ cache_dir: ['a'] })).toMatchObject({ path: 'extensions.view.cache_dir' });
    expect(problem('127.0.0.1:8787')).toMatchObject({ path: 'extensions.view', reason: expect.stringMatching(/must be a mapping/) });
  });
});
