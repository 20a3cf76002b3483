import type { ComponentFactory } from '../component.js';

/**
 * Registration point for the `token_metrics` processor (its code belongs in src/processors/token-metrics/).
 * Until this exports a factory, a configuration naming `token_metrics` is refused at validation as
 * not available in this build, and the embedded default leaves it out.
 *
 * To register: `export const tokenMetricsFactory: ComponentFactory<YourConfig> = { kind: 'processor', type: 'token_metrics', … }`.
 */
export const tokenMetricsFactory: ComponentFactory<any> | undefined = undefined;
