export { createMetrics, type KeyBalance, type Metrics } from './metrics';
export { snapshotQueue } from './queue-depth';
