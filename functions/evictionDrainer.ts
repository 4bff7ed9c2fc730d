// evictionDrainer: upstream doNoExecuteTaintingPass / doEvictionPass over the zone queues, then the due
// pod evictions (shared/app/drainer.ts). Runs on its schedule ("Scheduled Event") and when the monitor
// invokes it asynchronously ({ source: 'nlc.monitor', cluster, reason }), and waits in process for the
// next item that becomes due within its budget (drainUntilIdle). A payload of neither shape is logged
// naming the field and rethrown (retries, then the dead-letter queue).
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { publishMetrics } from './publishMetrics.js';
import { parser } from '@aws-lambda-powertools/parser/middleware';
import { EventBridgeSchema } from '@aws-lambda-powertools/parser/schemas/eventbridge';
import { z } from 'zod';
import { loadRuntime, type Runtime } from '../shared/adapters/runtime.js';
import { checkDrainerInvocation, DrainerInvocation } from '../shared/app/drainer.js';
import { drainerWaitBudget, drainUntilIdle } from '../shared/app/drainerScheduling.js';
import { logger, logParseError } from '../shared/observability.js';

const ScheduledEvent = EventBridgeSchema.extend({
  source: z.literal('aws.events'),
  'detail-type': z.literal('Scheduled Event'),
});

/** What this function accepts: its schedule, or the monitor's invoke. */
export const DrainerEvent = z.union([ScheduledEvent, DrainerInvocation]);
export type DrainerEvent = z.output<typeof DrainerEvent>;

// Once per cold start: clients and config only (docs/contributing.md#module-scope).
let runtime: Promise<Runtime> | undefined;
function getRuntime(): Promise<Runtime> {
  runtime ??= loadRuntime(process.env, { source: 'drainer' }).catch((error: unknown) => {
    runtime = undefined;
    throw error;
  });
  return runtime;
}

export const handler = middy<DrainerEvent, undefined>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(publishMetrics())
  .use(parser({ schema: DrainerEvent, errorHandler: logParseError('eviction drainer event') }))
  .handler(async (event, context, { signal }) => {
    const rt = await getRuntime();
    logger.appendKeys({ cluster: rt.clusterName });
    if ('cluster' in event) checkDrainerInvocation(event, rt.clusterName);
    // Waits in process for the next due item, within a budget that depends on who started the run.
    const trigger = 'cluster' in event ? event.reason : 'schedule';
    await drainUntilIdle(
      { config: rt.config, stores: rt.stores, cluster: rt.cluster, observer: rt.observer, signal },
      {
        now: () => rt.clock.now(),
        budgetMs: drainerWaitBudget(trigger, rt.config, context.getRemainingTimeInMillis()),
      },
    );
  });
