export { logOptions, REDACT_PATHS, safeError } from './log-options.js';
export { startMetricsServer, type TMetricsServer } from './metrics-server.js';
export { QUEUE_COUNT_STATES, registerQueueGauge } from './queue-gauge.js';
export { stopOnSignals, type TShutdownStep } from './shutdown.js';
export { registerTextParserMetrics, type TTextParserSource } from './text-parser-metrics.js';
