import type { ComponentFactory } from '../../component/component.js';
import { validateTokenMetricsConfig, type TokenMetricsConfig } from './config.js';

/** The `token_metrics` processor (src/processors/token-metrics/): the derive stage of every pass. */
export const tokenMetricsFactory: ComponentFactory<TokenMetricsConfig> | undefined = {
  kind: 'processor',
  type: 'token_metrics',
  defaultConfig: () => validateTokenMetricsConfig(undefined, 'processors.token_metrics'),
  validate: (raw, path) => validateTokenMetricsConfig(raw, path),
  create: async (cfg, settings) => new (await import('./component.js')).TokenMetricsComponent(cfg, settings),
};
