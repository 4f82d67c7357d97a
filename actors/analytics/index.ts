// Public surface of analytics: the event contract, the store, the recorder and the sweeper.
export * from './analytics-event.js';
export { EventStore, plan, type EventFilter, type EventQuery, type EventPage, type AggregateFilter, type AggregateQuery, type EventStoreOptions } from './event-store.js';
export { EventRecorder, type EventWriter, type EventRecorderOptions, type RecorderStats } from './event-recorder.js';
export { RetentionSweeper } from './retention-sweeper.js';
export { analyticsPath, openAnalyticsStore, type AnalyticsStoreConfig } from './analytics-store.js';
export { ThreadedEventWriter, type ThreadedWriterOptions } from './threaded-writer.js';
export { sessionMetrics, type SessionMetrics } from './session-metrics.js';
export { DIMENSIONS, METRICS, type Dimension, type AnyDimension, type Metric, type MetricBucket } from './aggregation.js';
export { type EventView, type StoredEvent, type EventRow, F as STORED_EVENT_FIELDS, EventIdGenerator } from './event-codec.js';
export { bucketOf, bucketValue } from './duration-histogram.js';
