// monitorNodeHealth: one Heartbeat Digest → one upstream monitorNodeHealth pass (shared/app/monitor.ts),
// and the once-a-minute schedule (detail-type "Scheduled Event") → the fallback check that reports a
// silent relay and starts the drainer. One handler for both rules (serverless.yml), told apart by
// detail-type. A malformed digest is logged naming the field and rethrown (Lambda retries, then the
// function's dead-letter queue); nothing is written.
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { publishMetrics } from './publishMetrics.js';
import { parser } from '@aws-lambda-powertools/parser/middleware';
import { EventBridgeSchema } from '@aws-lambda-powertools/parser/schemas/eventbridge';
import { z } from 'zod';
import { loadRuntime, type Runtime } from '../shared/adapters/runtime.js';
import { runMonitorPass, type MonitorCache, type MonitorDeps } from '../shared/app/monitor.js';
import type { NodeReadMemo } from '../shared/app/reconcileNodes.js';
import type { PodSweepMemo } from '../shared/app/reconcilePods.js';
import { runScheduledCheck } from '../shared/app/scheduledCheck.js';
import { HeartbeatDigestDetailType, HeartbeatDigestEvent } from '../shared/events.js';
import { logger, logParseError } from '../shared/observability.js';
import type { LoadedState } from '../shared/ports/stores.js';

/** The schedule rule's event (EventBridge Scheduler's classic form). */
export const ScheduledEvent = EventBridgeSchema.extend({
  source: z.literal('aws.events'),
  'detail-type': z.literal('Scheduled Event'),
});

/** What this function accepts: a Heartbeat Digest from the relay, or its schedule. */
export const MonitorEvent = z.discriminatedUnion('detail-type', [HeartbeatDigestEvent, ScheduledEvent]);
export type MonitorEvent = z.output<typeof MonitorEvent>;

// Once per cold start: clients and config (docs/contributing.md#module-scope). A failed load is retried by
// the next invocation instead of poisoning the container.
let runtime: Promise<Runtime> | undefined;
function getRuntime(): Promise<Runtime> {
  runtime ??= loadRuntime(process.env, { source: 'monitor' }).catch((error: unknown) => {
    runtime = undefined;
    throw error;
  });
  return runtime;
}

// The LoadedState of the last committed pass, by cluster: an accepted exception to "module scope holds
// clients and config only" (docs/state.md, "Write on change"). Without it every pass rereads the whole
// Nodes table (3,217 RRU at 5,000 nodes instead of 2). It is safe because passes of a cluster are
// serialized (reserved concurrency 1), the service removes the entry while it works and puts back only a
// committed state, and `refresh` rereads everything another writer may have changed.
const cache: MonitorCache = new Map<string, LoadedState>();
// What each node was last read from the API for (shared/app/reconcileNodes.ts): with the cache, so a
// difference the API cannot settle is read once per node per 5 minutes, not every pass.
const readMemo: NodeReadMemo = new Map();
// When the pods of each node that matters were last decided from the API (reconcilePods.ts).
const podSweepMemo: PodSweepMemo = new Map();

export const handler = middy<MonitorEvent, undefined>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(publishMetrics())
  .use(parser({ schema: MonitorEvent, errorHandler: logParseError(HeartbeatDigestDetailType) }))
  .handler(async (event, _context, { signal }) => {
    const rt = await getRuntime();
    logger.appendKeys({ cluster: rt.clusterName });
    const deps: MonitorDeps = {
      config: rt.config,
      stores: rt.stores,
      cluster: rt.cluster,
      observer: rt.observer,
      clock: rt.clock,
      signal,
      ...(rt.triggerDrainer !== undefined && { triggerDrainer: rt.triggerDrainer }),
    };
    if (event['detail-type'] === 'Scheduled Event') {
      await runScheduledCheck(deps, rt.clock.now());
      return;
    }
    logger.appendKeys({ sequence: event.detail.sequence });
    await runMonitorPass(deps, event.detail, { cache, readMemo, podSweepMemo });
  });
