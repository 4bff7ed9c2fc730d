// functions/taintEviction.ts: the taint eviction controller, for Node Changed (upstream handleNodeUpdate)
// and Pod Changed (upstream handlePodUpdate) events. The logic is shared/app/taintEviction.ts; this
// handler parses, wires and reports (docs/functions.md). The drainer fires the timers it schedules.
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { publishMetrics } from './publishMetrics.js';
import { parser } from '@aws-lambda-powertools/parser/middleware';
import { z } from 'zod';
import { loadRuntime, type Runtime } from '../shared/adapters/runtime.js';
import { handleNodeChanged, handlePodChanged, TaintEvictionSource } from '../shared/app/taintEviction.js';
import { EventParseError } from '../shared/errors.js';
import {
  eventParseErrorFrom,
  NodeChangedDetailType,
  NodeChangedEvent,
  PodChangedDetailType,
  PodChangedEvent,
} from '../shared/events.js';
import { logger } from '../shared/observability.js';

/**
 * The two events this function is subscribed to, whole: the detail's schema depends on `detail-type`,
 * which an envelope would drop.
 */
const TaintEvictionEvent = z.discriminatedUnion('detail-type', [NodeChangedEvent, PodChangedEvent], {
  // Typed loosely on purpose: a non-object input reaches this callback too (see shared/events.ts).
  error: (iss: { readonly code?: string }) =>
    iss.code === 'invalid_union'
      ? `expected "${NodeChangedDetailType}" or "${PodChangedDetailType}"`
      : undefined,
});

// Once per cold start: clients and settings only; a failed start is retried by the next invocation.
let runtime: Promise<Runtime> | undefined;
function getRuntime(): Promise<Runtime> {
  runtime ??= loadRuntime(process.env, { source: TaintEvictionSource }).catch((error: unknown) => {
    runtime = undefined;
    throw error;
  });
  return runtime;
}

export const handler = middy()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(publishMetrics())
  .use(parser({ schema: TaintEvictionEvent, safeParse: true }))
  .handler(async (parsed, _context, { signal }) => {
    if (!parsed.success) {
      const error = eventParseErrorFrom(
        parsed.error,
        `${NodeChangedDetailType} or ${PodChangedDetailType} event`,
      );
      logger.error('malformed event', { issues: error.issues });
      throw error;
    }
    const event = parsed.data;
    const { detail } = event;
    logger.appendKeys({
      cluster: detail.cluster,
      ...(event['detail-type'] === NodeChangedDetailType
        ? { node: event.detail.node.name }
        : { node: event.detail.pod.nodeName, pod: `${event.detail.pod.namespace}/${event.detail.pod.name}` }),
    });
    const rt = await getRuntime();
    if (detail.cluster !== rt.clusterName) {
      const error = new EventParseError(event['detail-type'], [
        `detail.cluster: this deployment serves cluster ${JSON.stringify(rt.clusterName)}, got ${JSON.stringify(detail.cluster)}`,
      ]);
      logger.error('event for another cluster', { issues: error.issues });
      throw error;
    }
    const deps = {
      config: rt.config,
      stores: rt.stores,
      cluster: rt.cluster,
      observer: rt.observer,
      clock: rt.clock,
    };
    if (event['detail-type'] === NodeChangedDetailType)
      await handleNodeChanged(deps, event.detail, { signal });
    else await handlePodChanged(deps, event.detail, { signal });
  });
