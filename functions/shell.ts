// The one shape of every Lambda shell: Powertools' logger context and metrics, the parser over the
// whole event (a malformed one is logged naming each field and thrown before any I/O, so Lambda retries
// it and the dead-letter queue keeps it), the runtime built once per cold start, then the function's
// dispatch (shared/app/dispatch.ts), whose waits the invocation sleeps through.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { parser } from '@aws-lambda-powertools/parser/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { z } from 'zod';
import { loadRuntime, type Runtime } from '../shared/adapters/runtime.js';
import {
  Dispatch,
  newWarmState,
  type FunctionDeps,
  type FunctionInput,
  type FunctionName,
} from '../shared/app/dispatch.js';
import { runSteps } from '../shared/app/steps.js';
import { EventParseError } from '../shared/errors.js';
import { eventParseErrorFrom } from '../shared/events.js';
import { logger } from '../shared/observability.js';
import { publishMetrics } from './publishMetrics.js';

export interface ShellSpec<S extends z.ZodType> {
  readonly name: FunctionName;
  /** The Decisions' source of this function (the runtime's name for it). */
  readonly source: string;
  /** What the function accepts, whole (envelope included). */
  readonly schema: S;
  /** How a rejected input is named ("Node Changed", "eviction drainer event"). */
  readonly what: string;
  /** The dispatch input a parsed event stands for. */
  readonly input: (event: z.output<S>) => FunctionInput;
  /** Log keys of the event (node, pod, sequence), beside the cluster. */
  readonly keys?: (event: z.output<S>) => Record<string, string | number>;
}

/**
 * The middy handler of one function.
 *
 * @example
 * export const handler = lambdaHandler({ name: 'nodeTaints', source: NodeTaintsSource, schema: NodeChangedEvent, what: NodeChangedDetailType, input: (event) => ({ kind: 'event', event }) });
 */
export function lambdaHandler<S extends z.ZodType>(spec: ShellSpec<S>) {
  // Once per cold start: clients and settings only. A failed start is not kept, so the next invocation
  // tries again (cluster credentials held in AWS may be briefly unavailable).
  let runtime: Promise<Runtime> | undefined;
  const getRuntime = (): Promise<Runtime> => {
    runtime ??= loadRuntime(process.env, { source: spec.source }).catch((error: unknown) => {
      runtime = undefined;
      throw error;
    });
    return runtime;
  };
  const warm = newWarmState();
  return middy<unknown, undefined>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(publishMetrics()) // flushes on success and on error
    .use(parser({ schema: spec.schema, safeParse: true }))
    .handler(async (parsed, context: Context, { signal }) => {
      if (!parsed.success) {
        const error = eventParseErrorFrom(parsed.error, spec.what);
        const original: unknown = parsed.originalEvent;
        logger.error('malformed event rejected: nothing written', {
          event: spec.what,
          problems: error.issues,
          detailType:
            typeof original === 'object' && original !== null
              ? Reflect.get(original, 'detail-type')
              : undefined,
        });
        throw error;
      }
      const event = parsed.data as z.output<S>;
      const rt = await getRuntime();
      logger.appendKeys({ cluster: rt.clusterName, ...spec.keys?.(event) });
      const deps: FunctionDeps = {
        config: rt.config,
        stores: rt.stores,
        cluster: rt.cluster,
        observer: rt.observer,
        clock: rt.clock,
        signal,
        ...(rt.triggerDrainer !== undefined && { triggerDrainer: rt.triggerDrainer }),
      };
      try {
        const first = await Dispatch[spec.name](
          { deps, warm, remainingMs: () => context.getRemainingTimeInMillis() },
          spec.input(event),
        );
        await runSteps(first, undefined, signal);
      } catch (error) {
        // For another cluster, or not this function's: rejected before any write, as a malformed event.
        if (error instanceof EventParseError)
          logger.error('event rejected: nothing written', { event: spec.what, problems: error.issues });
        throw error;
      }
    });
}
