import { describe, expect, test } from '@jest/globals';
import { parseConfig } from '../../src/service/config.js';
import { REGISTRY } from '../../src/service/registry.js';
import { carriesSessions, localReceiverConfig, metricsSourceOf, pipelinesOf, tokenMetricsFeeding } from '../../src/service/pipelines.js';
import { scopeFromConfig } from '../../src/service/push.js';

const ENV = { HOME: '/home/someone' } as NodeJS.ProcessEnv;
const read = (yaml: string) => parseConfig(yaml, ENV, 'test.yaml', REGISTRY);

/** Two exporters: oap gets sessions and derived metrics, mirror only the receiver's own metrics on a root that does not derive. */
const DERIVING = `
receivers:
  claude_code_local:
  claude_code_otlp:
processors:
  assembler:
  token_metrics:
    lookback: 2d
exporters:
  otlp/oap: { endpoint: 127.0.0.1:11800 }
  prometheus: { endpoint: 127.0.0.1:0 }
service:
  pipelines:
    sessions: { receivers: [claude_code_local, claude_code_otlp], processors: [assembler], exporters: [otlp/oap] }
    metrics: { receivers: [claude_code_local], processors: [token_metrics], exporters: [otlp/oap, prometheus] }
`;

const PASSING = `
receivers:
  claude_code_otlp:
exporters:
  otlp/mirror: { endpoint: 127.0.0.1:4317 }
  otlp/logs-only: { endpoint: 127.0.0.1:4319 }
service:
  pipelines:
    metrics: { receivers: [claude_code_otlp], exporters: [otlp/mirror] }
    sessions: { receivers: [claude_code_otlp], exporters: [otlp/logs-only] }
`;

describe('how pipelines compose, as the service and the one-shot commands both read it', () => {
  test('an exporter fed by token_metrics sends derived usage; one fed only by claude_code_otlp sends what was spooled; a sessions-only exporter sends no metrics', () => {
    const d = read(DERIVING);
    expect(metricsSourceOf(d, 'otlp/oap')).toBe('derived');
    expect(metricsSourceOf(d, 'prometheus')).toBe('derived');
    const p = read(PASSING);
    expect(metricsSourceOf(p, 'otlp/mirror')).toBe('received');
    expect(metricsSourceOf(p, 'otlp/logs-only')).toBeUndefined();
  });

  test('landed files and rounds go to exporters in a sessions pipeline, and to one named on its own that no pipeline uses', () => {
    const p = read(PASSING);
    expect(carriesSessions(p, 'otlp/logs-only')).toBe(true);
    expect(carriesSessions(p, 'otlp/mirror')).toBe(false);
    expect(carriesSessions(p, 'otlp/unlisted')).toBe(true);
  });

  test('the derivation an exporter waits for is the token_metrics of its own metrics pipelines, with its settings', () => {
    const d = read(DERIVING);
    expect(tokenMetricsFeeding(d, 'otlp/oap')).toEqual([expect.objectContaining({ lookbackMs: 2 * 86_400_000 })]);
    expect(tokenMetricsFeeding(read(PASSING), 'otlp/mirror')).toEqual([]);
  });

  test('a component is told the pipelines it is in; an extension is in none', () => {
    const d = read(DERIVING);
    expect(pipelinesOf(d, { kind: 'exporter', id: 'otlp/oap' }).map((x) => x.id)).toEqual(['sessions', 'metrics']);
    expect(pipelinesOf(d, { kind: 'receiver', id: 'claude_code_otlp' }).map((x) => x.id)).toEqual(['sessions']);
    expect(pipelinesOf(d, { kind: 'extension', id: 'view' })).toEqual([]);
  });

  test('the one-shot commands take the local receiver named claude_code_local, else the first of its type, else the defaults', () => {
    const two = read(
      'receivers:\n  claude_code_local/a: { source_root: /a }\n  claude_code_local: { source_root: /plain }\nservice:\n  pipelines:\n    sessions: { receivers: [claude_code_local/a, claude_code_local] }\n',
    );
    expect(localReceiverConfig(two).sourceRoot).toBe('/plain');
    const named = read('receivers:\n  claude_code_local/a: { source_root: /a }\nservice:\n  pipelines:\n    sessions: { receivers: [claude_code_local/a] }\n');
    expect(localReceiverConfig(named).sourceRoot).toBe('/a');
    const none = read('receivers:\n  claude_code_otlp:\nservice:\n  pipelines:\n    sessions: { receivers: [claude_code_otlp] }\n');
    expect(localReceiverConfig(none, { CLAUDE_CONFIG_DIR: '/cc' })).toMatchObject({ sourceRoot: '/cc/projects', sourceRootFrom: 'CLAUDE_CONFIG_DIR' });
  });

  test('push sweeps the spool for the consumers the configuration names: the otlp exporters that send metrics, and a prometheus reader it cannot ask', () => {
    const scope = scopeFromConfig(read(DERIVING));
    expect(scope.consumers).toEqual([expect.objectContaining({ id: 'otlp/oap', source: 'derived', endpoint: expect.stringContaining('11800') })]);
    expect(scope.readers).toEqual([{ id: 'prometheus', source: 'derived' }]);
    expect(scopeFromConfig(read(PASSING)).consumers.map((c) => [c.id, c.source])).toEqual([['otlp/mirror', 'received']]);
  });
});
