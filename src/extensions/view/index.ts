/**
 * The `view` extension. A host registers it with `validateViewConfig` and `defaultViewConfig`
 * (./config.js, which loads nothing heavy) and creates a `ViewExtension` (which loads express).
 */
export { ViewExtension, type ViewContext } from './extension.js';
export { defaultViewConfig, validateViewConfig, VIEW_DEFAULT_ENDPOINT, type ViewConfig } from './config.js';
