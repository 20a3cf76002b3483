import { validateHealthCheckConfig, type HealthCheckConfig } from './config.js';
import type { ComponentFactory } from '../../component/component.js';

export const healthCheckFactory: ComponentFactory<HealthCheckConfig> = {
  kind: 'extension',
  type: 'health_check',
  defaultConfig: () => validateHealthCheckConfig(undefined, 'extensions.health_check'),
  validate: (raw, path) => validateHealthCheckConfig(raw, path),
  // Loaded on use, so commands that only read the configuration do not load express.
  create: async (cfg, settings) => new (await import('./extension.js')).HealthCheckExtension(cfg, settings),
};
