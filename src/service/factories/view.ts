import type { ComponentFactory } from '../component.js';

/**
 * Registration point for the `view` extension (its code belongs in src/extensions/view/).
 * Until this exports a factory, a configuration naming `view` is refused at validation as
 * not available in this build, and the embedded default leaves it out.
 *
 * To register: `export const viewFactory: ComponentFactory<YourConfig> = { kind: 'extension', type: 'view', … }`.
 */
export const viewFactory: ComponentFactory<any> | undefined = undefined;
