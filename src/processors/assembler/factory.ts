import { validateAssemblerConfig, type AssemblerConfig } from './config.js';
import type { ComponentFactory } from '../../component/component.js';

export const assemblerFactory: ComponentFactory<AssemblerConfig> = {
  kind: 'processor',
  type: 'assembler',
  defaultConfig: () => validateAssemblerConfig(undefined, 'processors.assembler'),
  validate: (raw, path) => validateAssemblerConfig(raw, path),
  create: async (cfg, settings) => new (await import('./component.js')).AssemblerComponent(cfg, settings),
};
