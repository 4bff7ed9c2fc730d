// functions/podProcessing.ts: one Pod Changed event → upstream processPod (MarkPodsNotReady for a pod newly
// bound to a node that is not Ready; legacy mode: processNoTaintBaseEviction for that pod). The logic is
// shared/app/podProcessing.ts; this handler parses, wires and reports (docs/functions.md).
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { publishMetrics } from './publishMetrics.js';
import { EventBridgeEnvelope } from '@aws-lambda-powertools/parser/envelopes/eventbridge';
import { parser } from '@aws-lambda-powertools/parser/middleware';
import { loadRuntime, type Runtime } from '../shared/adapters/runtime.js';
import { PodProcessingSource, processPodChange } from '../shared/app/podProcessing.js';
import { EventParseError } from '../shared/errors.js';
import { eventParseErrorFrom, PodChangedDetail, PodChangedDetailType } from '../shared/events.js';
import { logger } from '../shared/observability.js';

// Once per cold start: clients and settings only; a failed start is retried by the next invocation.
let runtime: Promise<Runtime> | undefined;
function getRuntime(): Promise<Runtime> {
  runtime ??= loadRuntime(process.env, { source: PodProcessingSource }).catch((error: unknown) => {
    runtime = undefined;
    throw error;
  });
  return runtime;
}

export const handler = middy()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(publishMetrics())
  .use(parser({ schema: PodChangedDetail, envelope: EventBridgeEnvelope, safeParse: true }))
  .handler(async (parsed, _context, { signal }) => {
    if (!parsed.success) {
      const error = eventParseErrorFrom(parsed.error, PodChangedDetailType);
      logger.error('malformed event', { detailType: PodChangedDetailType, issues: error.issues });
      throw error;
    }
    const change = parsed.data;
    logger.appendKeys({
      cluster: change.cluster,
      node: change.pod.nodeName,
      pod: `${change.pod.namespace}/${change.pod.name}`,
    });
    const rt = await getRuntime();
    if (change.cluster !== rt.clusterName) {
      const error = new EventParseError(PodChangedDetailType, [
        `detail.cluster: this deployment serves cluster ${JSON.stringify(rt.clusterName)}, got ${JSON.stringify(change.cluster)}`,
      ]);
      logger.error('event for another cluster', { issues: error.issues });
      throw error;
    }
    await processPodChange(
      { config: rt.config, stores: rt.stores, cluster: rt.cluster, observer: rt.observer, clock: rt.clock },
      change,
      { signal },
    );
  });
