import { describe, expect, test } from '@jest/globals';
import { ConfigError } from '../../src/util/errors.js';
import {
  DEFAULT_LOCK_WAIT_MS,
  DEFAULT_MAX_JOURNAL_BYTES,
  DEFAULT_MAX_REQUEST_BYTES,
  DEFAULT_MAX_SPOOL_BYTES,
  defaultOtlpReceiverConfig,
  parseEndpoint,
  validateOtlpReceiverConfig,
} from '../../src/receivers/claude-code-otlp/index.js';

const P = 'receivers.claude_code_otlp';

function errorOf(raw: unknown): { path: string; reason: string } {
  try {
    validateOtlpReceiverConfig(raw, P);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return { path: (e as ConfigError).path, reason: (e as ConfigError).reason };
  }
  throw new Error('expected a ConfigError');
}

describe('claude_code_otlp configuration', () => {
  test('defaults: gRPC on 127.0.0.1:4317, HTTP on 127.0.0.1:4318, 16 MiB requests, 1 GiB spool, 512 MiB journal, 5 s lock wait, process durability', () => {
    const d = defaultOtlpReceiverConfig();
    expect(d).toEqual({
      grpc: { host: '127.0.0.1', port: 4317 },
      http: { host: '127.0.0.1', port: 4318 },
      maxRequestBytes: 16 * 1024 * 1024,
      maxSpoolBytes: 1024 ** 3,
      maxJournalBytes: 512 * 1024 ** 2,
      lockWaitMs: 5000,
      durability: 'process',
      unconsumedSpool: { maxAgeMs: 7 * 24 * 3_600_000, maxBytes: 256 * 1024 * 1024 },
    });
    expect([DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_SPOOL_BYTES, DEFAULT_MAX_JOURNAL_BYTES, DEFAULT_LOCK_WAIT_MS]).toEqual([
      d.maxRequestBytes,
      d.maxSpoolBytes,
      d.maxJournalBytes,
      d.lockWaitMs,
    ]);
    expect(validateOtlpReceiverConfig(null)).toEqual(d);
    expect(validateOtlpReceiverConfig({})).toEqual(d);
  });

  test('protocols name what is served; an empty protocol takes its default endpoint', () => {
    expect(validateOtlpReceiverConfig({ protocols: { grpc: null } })).toMatchObject({ grpc: { port: 4317 }, http: undefined });
    expect(validateOtlpReceiverConfig({ protocols: { http: { endpoint: '0.0.0.0:9999' } } })).toMatchObject({
      grpc: undefined,
      http: { host: '0.0.0.0', port: 9999 },
    });
    expect(validateOtlpReceiverConfig({ protocols: { grpc: {}, http: { endpoint: ':4318' } } })).toMatchObject({
      grpc: { port: 4317 },
      http: { host: '0.0.0.0', port: 4318 },
    });
  });

  test('one endpoint serves both', () => {
    const c = validateOtlpReceiverConfig({ endpoint: '[::1]:4317', max_request_bytes: '4MiB', max_spool_bytes: 0, lock_wait: '250ms', durability: 'machine' });
    expect(c).toEqual({
      endpoint: { host: '::1', port: 4317 },
      grpc: undefined,
      http: undefined,
      maxRequestBytes: 4 * 1024 * 1024,
      maxSpoolBytes: 0,
      maxJournalBytes: 512 * 1024 ** 2,
      lockWaitMs: 250,
      durability: 'machine',
      unconsumedSpool: { maxAgeMs: 7 * 24 * 3_600_000, maxBytes: 256 * 1024 * 1024 },
    });
    // Unset, the journal's bound grows with the largest request; set, it must hold one.
    expect(validateOtlpReceiverConfig({ max_request_bytes: '1GiB' }).maxJournalBytes).toBe(4 * 1024 ** 3);
    expect(validateOtlpReceiverConfig({ max_journal_bytes: '64MiB' }).maxJournalBytes).toBe(64 * 1024 ** 2);
  });

  test('every error names its exact path and what is allowed', () => {
    expect(errorOf({ protocols: { grpc: { endpoint: 'localhost' } } })).toEqual({
      path: `${P}.protocols.grpc.endpoint`,
      reason: expect.stringMatching(/"localhost" is not a listen address; write host:port/),
    });
    expect(errorOf({ protocols: { grpc: { endpoint: 'http://127.0.0.1:4317' } } })).toEqual({
      path: `${P}.protocols.grpc.endpoint`,
      reason: expect.stringMatching(/without a scheme/),
    });
    expect(errorOf({ protocols: { http: { endpoint: '127.0.0.1:70000' } } })).toEqual({
      path: `${P}.protocols.http.endpoint`,
      reason: expect.stringMatching(/port 70000 is out of range 0-65535/),
    });
    expect(errorOf({ protocols: { http: { endpoint: 4318 } } }).path).toBe(`${P}.protocols.http.endpoint`);
    expect(errorOf({ protocols: { grpc: { endpont: 'x' } } })).toEqual({ path: `${P}.protocols.grpc.endpont`, reason: 'unknown key; allowed here: endpoint' });
    expect(errorOf({ protocols: { thrift: {} } })).toEqual({ path: `${P}.protocols.thrift`, reason: 'unknown key; allowed here: grpc, http' });
    expect(errorOf({ protocols: {} })).toEqual({ path: `${P}.protocols`, reason: 'must name at least one of grpc and http' });
    expect(errorOf({ protocols: 'grpc' }).path).toBe(`${P}.protocols`);
    expect(errorOf({ listen: ':4317' })).toEqual({ path: `${P}.listen`, reason: expect.stringMatching(/^unknown key; allowed here: protocols, endpoint/) });
    expect(errorOf({ endpoint: '127.0.0.1:4317', protocols: { grpc: {} } })).toEqual({
      path: `${P}.endpoint`,
      reason: expect.stringMatching(/cannot be combined with protocols/),
    });
    expect(errorOf({ protocols: { grpc: { endpoint: '127.0.0.1:4317' }, http: { endpoint: '127.0.0.1:4317' } } })).toEqual({
      path: `${P}.protocols.http.endpoint`,
      reason: expect.stringMatching(/same address as grpc.*set receivers\.claude_code_otlp\.endpoint/),
    });
    expect(errorOf({ max_request_bytes: '12 parsecs' })).toEqual({ path: `${P}.max_request_bytes`, reason: expect.stringMatching(/not a byte size/) });
    expect(errorOf({ max_request_bytes: 10 })).toEqual({ path: `${P}.max_request_bytes`, reason: 'must be from 1024 to 1073741824 bytes, got 10' });
    expect(errorOf({ max_request_bytes: '2GiB' }).path).toBe(`${P}.max_request_bytes`);
    expect(errorOf({ max_spool_bytes: 5 })).toEqual({ path: `${P}.max_spool_bytes`, reason: expect.stringMatching(/or 0 for no limit, got 5/) });
    expect(errorOf({ unconsumed_spool: { max_size: '1MiB' } })).toEqual({
      path: `${P}.unconsumed_spool.max_size`,
      reason: expect.stringMatching(/allowed here: max_age, max_bytes/),
    });
    expect(errorOf({ unconsumed_spool: { max_age: 'a while' } }).path).toBe(`${P}.unconsumed_spool.max_age`);
    expect(validateOtlpReceiverConfig({ unconsumed_spool: { max_age: '24h', max_bytes: 0 } }).unconsumedSpool).toEqual({ maxAgeMs: 86_400_000, maxBytes: 0 });
    expect(errorOf({ lock_wait: 'soon' }).path).toBe(`${P}.lock_wait`);
    expect(errorOf({ lock_wait: '2h' })).toEqual({ path: `${P}.lock_wait`, reason: 'must be at most 1h' });
    expect(errorOf({ max_journal_bytes: '1MiB' })).toEqual({
      path: `${P}.max_journal_bytes`,
      reason: expect.stringMatching(/^must be at least max_request_bytes \(16777216\)/),
    });
    expect(errorOf({ max_journal_bytes: 0 })).toEqual({ path: `${P}.max_journal_bytes`, reason: expect.stringMatching(/^must be from 1024 to/) });
    expect(errorOf({ durability: 'fsync' })).toEqual({
      path: `${P}.durability`,
      reason: expect.stringMatching(/^must be one of process, machine \(process: .*got "fsync"$/),
    });
    expect(errorOf({ durability: true }).path).toBe(`${P}.durability`);
    expect(errorOf([1])).toEqual({ path: P, reason: 'must be a mapping, got a list' });
  });

  test('endpoint forms', () => {
    expect(parseEndpoint('127.0.0.1:0', 'x')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseEndpoint('localhost:4317', 'x')).toEqual({ host: 'localhost', port: 4317 });
    expect(parseEndpoint('[::]:4318', 'x')).toEqual({ host: '::', port: 4318 });
    expect(() => parseEndpoint('::1:4317', 'x')).toThrow(ConfigError);
  });
});
