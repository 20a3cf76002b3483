import { defaultViewConfig, validateViewConfig, type ViewConfig } from './config.js';
import type { Component, ComponentFactory, ComponentSettings } from '../../component/component.js';

/**
 * The view inside the service. Express and the page load only when the extension is created,
 * so validating a configuration never pulls them in.
 */
export const viewFactory: ComponentFactory<ViewConfig> = {
  kind: 'extension',
  type: 'view',
  defaultConfig: () => defaultViewConfig(),
  validate: (raw, path) => validateViewConfig(raw, path),
  create: async (cfg: ViewConfig, s: ComponentSettings): Promise<Component> => {
    const { ViewExtension } = await import('./extension.js');
    const log = s.log as unknown as Record<string, (msg: string, fields?: object) => void>;
    const ext = new ViewExtension(cfg, {
      storageRoot: s.storageRoot,
      describeService: () => s.host.describe?.(),
      registry: s.telemetry.registry,
      passes: true,
      log: (level, msg, fields) => log[level]?.call(s.log, msg, fields),
    });
    // The parse stage's last step (extensions come after the processors): a waiting page hears of the new rounds at once.
    const parse = async () => ext.afterPass();
    return { start: () => ext.start(), shutdown: () => ext.shutdown(), addresses: () => ({ view: ext.address() }), parse };
  },
};
