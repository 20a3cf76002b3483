import { validateHealthCheckConfig, type HealthCheckConfig } from '../../extensions/health-check/config.js';
import type { ComponentFactory } from '../component.js';

export const healthCheckFactory: ComponentFactory<HealthCheckConfig> = {
  kind: 'extension',
  type: 'health_check',
  defaultConfig: () => validateHealthCheckConfig(undefined, 'extensions.health_check'),
  validate: (raw, path) => validateHealthCheckConfig(raw, path),
  // Loaded on use, so commands that only read the configuration do not load express.
  create: async (cfg, settings) => new (await import('../../extensions/health-check/extension.js')).HealthCheckExtension(cfg, settings),
};
