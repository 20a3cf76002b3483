import { validateOtlpReceiverConfig, defaultOtlpReceiverConfig, type OtlpReceiverConfig } from './config.js';
import type { ComponentFactory } from '../../component/component.js';

export const claudeCodeOtlpFactory: ComponentFactory<OtlpReceiverConfig> = {
  kind: 'receiver',
  type: 'claude_code_otlp',
  defaultConfig: defaultOtlpReceiverConfig,
  validate: (raw, path) => validateOtlpReceiverConfig(raw, path),
  create: async (cfg, settings) => new (await import('./component.js')).OtlpReceiverComponent(cfg, settings),
};
