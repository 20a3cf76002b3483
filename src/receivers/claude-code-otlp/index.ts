/** The `claude_code_otlp` receiver's public surface, for the service host. */
export { OtlpReceiver, type OtlpReceiverOptions, type OtlpReceiverAddresses, type OtlpReceiverStats, type ReceiverLog, type LogLevel } from './receiver.js';
export {
  validateOtlpReceiverConfig,
  defaultOtlpReceiverConfig,
  parseEndpoint,
  formatEndpoint,
  DEFAULT_GRPC_ENDPOINT,
  DEFAULT_HTTP_ENDPOINT,
  DEFAULT_MAX_REQUEST_BYTES,
  DEFAULT_MAX_SPOOL_BYTES,
  DEFAULT_MAX_JOURNAL_BYTES,
  DEFAULT_LOCK_WAIT_MS,
  type OtlpReceiverConfig,
  type Endpoint,
} from './config.js';
export type { ItemName, ItemRefusalReason, Transport } from './stats.js';
export type { RefusalReason } from '../../otlp/codec.js';
