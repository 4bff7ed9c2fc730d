// Powertools Logger and Metrics for the Lambda handlers (docs/contributing.md#logging-and-metrics: one logger
// and one metrics instance, constant messages, data in keys). The application layer sees them only through
// the Observer port.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Observer } from './ports/observer.js';
import { formatZoneKey } from './domain/zones.js';
import { formatZodIssues } from './events.js';
import { z } from 'zod';

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

/**
 * The parser middleware's `errorHandler`: logs one line per problem, each naming the field
 * (formatZodIssues), and returns undefined so the ParseError is rethrown: the event goes to Lambda's
 * retries and then the function's dead-letter queue, with nothing written (docs/events.md).
 *
 * @example
 * middy().use(parser({ schema: HeartbeatDigestEvent, errorHandler: logParseError('Heartbeat Digest') }))
 */
export function logParseError(what: string): (error: Error, event: unknown) => undefined {
  return (error, event) => {
    const cause: unknown = error.cause;
    const issues =
      cause instanceof z.ZodError ? cause.issues : Array.isArray(cause) ? (cause as z.core.$ZodIssue[]) : [];
    const problems = issues.length > 0 ? formatZodIssues(new z.ZodError(issues)) : [error.message];
    logger.error('malformed event rejected: nothing written', {
      event: what,
      problems,
      detailType: typeof event === 'object' && event !== null ? Reflect.get(event, 'detail-type') : undefined,
    });
    return undefined;
  };
}
