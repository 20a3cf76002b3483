/**
 * The `_metrics/` spool's names. Every metrics request the receiver accepted lands there as
 * received, one write-once file per request, `metrics-<received-at>-<seq>-otlp.pb`, holding the
 * ExportMetricsServiceRequest's protobuf bytes (a JSON request is converted to protobuf first,
 * so the spool has one format). `_metrics/spool.state` holds the next number; both are written
 * under `_metrics/.lock`, which the metrics derivation also takes. The landing thread
 * (land-worker.ts) writes them; past `max_spool_bytes` the request thread refuses metrics.
 */
export const METRICS_DIR = '_metrics';
/** `metrics-<received-at>-<seq>-otlp.pb`: what this receiver lands. */
export const SPOOL_NAME = /^metrics-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})-otlp\.pb$/;
