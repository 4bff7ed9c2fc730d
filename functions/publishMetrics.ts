// Flushes the invocation's EMF metrics, but only when it recorded some. Powertools' logMetrics logs a
// "No application metrics to publish" warning on every empty flush: one log line per pod or node
// event, paid for in CloudWatch Logs ingestion. Zone-labelled metrics are single metrics and are
// flushed as they are added (shared/observability.ts).
import type { MiddlewareObj } from '@middy/core';
import { metrics } from '../shared/observability.js';

export function publishMetrics(): MiddlewareObj {
  const publishMetricsAfter = (): void => {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  };
  return { after: publishMetricsAfter, onError: publishMetricsAfter };
}
