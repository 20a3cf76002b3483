import { validateLocalReceiverConfig, type LocalReceiverConfig } from './config.js';
import type { ComponentFactory } from '../../component/component.js';

export const claudeCodeLocalFactory: ComponentFactory<LocalReceiverConfig> = {
  kind: 'receiver',
  type: 'claude_code_local',
  defaultConfig: () => validateLocalReceiverConfig(undefined, 'receivers.claude_code_local', process.env),
  validate: (raw, path, ctx) => validateLocalReceiverConfig(raw, path, ctx.env),
  create: async (cfg, settings) => new (await import('./component.js')).LocalReceiverComponent(cfg, settings),
  passInterval: (cfg) => cfg.intervalMs,
};
