// functions/nodeTaints.ts: one Node Changed event → upstream doNodeProcessingPassWorker for that node
// (doNoScheduleTaintingPass + reconcileNodeLabels), keeping the Nodes table's copy current. The logic is
// shared/app/nodeTaints.ts; this handler parses, wires and reports (docs/functions.md).
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { publishMetrics } from './publishMetrics.js';
import { EventBridgeEnvelope } from '@aws-lambda-powertools/parser/envelopes/eventbridge';
import { parser } from '@aws-lambda-powertools/parser/middleware';
import { loadRuntime, type Runtime } from '../shared/adapters/runtime.js';
import { NodeTaintsSource, runNodeTaints } from '../shared/app/nodeTaints.js';
import { EventParseError } from '../shared/errors.js';
import { eventParseErrorFrom, NodeChangedDetail, NodeChangedDetailType } from '../shared/events.js';
import { logger } from '../shared/observability.js';

// Once per cold start: clients and settings only. A failed start is not kept, so the next invocation
// tries again (cluster credentials held in AWS may be briefly unavailable).
let runtime: Promise<Runtime> | undefined;
function getRuntime(): Promise<Runtime> {
  runtime ??= loadRuntime(process.env, { source: NodeTaintsSource }).catch((error: unknown) => {
    runtime = undefined;
    throw error;
  });
  return runtime;
}

export const handler = middy()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(publishMetrics()) // flushes on success and on error
  // A bad shape or schemaVersion: rejected before any I/O (→ Lambda retries → on-failure destination).
  .use(parser({ schema: NodeChangedDetail, envelope: EventBridgeEnvelope, safeParse: true }))
  .handler(async (parsed, _context, { signal }) => {
    if (!parsed.success) {
      const error = eventParseErrorFrom(parsed.error, NodeChangedDetailType);
      logger.error('malformed event', { detailType: NodeChangedDetailType, issues: error.issues });
      throw error;
    }
    const change = parsed.data;
    logger.appendKeys({ cluster: change.cluster, node: change.node.name });
    const rt = await getRuntime();
    if (change.cluster !== rt.clusterName) {
      const error = new EventParseError(NodeChangedDetailType, [
        `detail.cluster: this deployment serves cluster ${JSON.stringify(rt.clusterName)}, got ${JSON.stringify(change.cluster)}`,
      ]);
      logger.error('event for another cluster', { issues: error.issues });
      throw error;
    }
    await runNodeTaints(
      { config: rt.config, stores: rt.stores, cluster: rt.cluster, observer: rt.observer, clock: rt.clock },
      change,
      { signal },
    );
  });
