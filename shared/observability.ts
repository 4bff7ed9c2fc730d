// Powertools Logger and Metrics for the Lambda handlers (STYLE: one logger and one metrics instance,
// constant messages, data in keys). The application layer sees them only through the Observer port.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Observer } from './ports/observer.js';
import { formatZoneKey } from './domain/zones.js';

export const logger = new Logger({ serviceName: 'nlc' });
export const metrics = new Metrics({ namespace: 'NodeLifecycleController', serviceName: 'nlc' });

const units = { Count: MetricUnit.Count, Percent: MetricUnit.Percent, Seconds: MetricUnit.Seconds } as const;

/** The Observer a handler passes to the application layer. */
export const powertoolsObserver: Observer = {
  debug: (message, fields) => {
    logger.debug(message, { ...fields });
  },
  info: (message, fields) => {
    logger.info(message, { ...fields });
  },
  warn: (message, fields) => {
    logger.warn(message, { ...fields });
  },
  error: (message, fields) => {
    logger.error(message, { ...fields });
  },
  metric: (name, unit, value, dimensions) => {
    if (dimensions?.zone === undefined) {
      metrics.addMetric(name, units[unit], value);
      return;
    }
    // A zone-labelled metric is flushed on its own so its dimension does not leak onto the others.
    const single = metrics.singleMetric();
    single.addDimension('zone', formatZoneKey(dimensions.zone) || '-');
    single.addMetric(name, units[unit], value);
  },
};
