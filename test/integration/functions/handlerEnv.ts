// The environment the Lambda handlers read at their cold start (loadRuntime), pointed at a test world:
// tables on its dynalite, the API simulator through a kubeconfig file, the drainer invoked through a
// local stand-in of the Lambda API. Shared by the tests that call the real handlers.
import type { Context } from 'aws-lambda';
import { vi } from 'vitest';
import type { FakeLambda } from './fakeLambda.js';
import type { World } from './world.js';

/** Sets the handlers' environment (vi.stubEnv; undo with vi.unstubAllEnvs) and clears AWS credentials. */
export function stubHandlerEnv(world: World, lambda: FakeLambda, kubeconfig: string): void {
  const env: Record<string, string> = {
    NLC_CLUSTER: 'test',
    NLC_NODES_TABLE: world.db.tables.nodes,
    NLC_ZONES_TABLE: world.db.tables.zones,
    NLC_EVICTION_QUEUE_TABLE: world.db.tables.evictionQueue,
    NLC_POD_EVICTIONS_TABLE: world.db.tables.podEvictions,
    NLC_DECISIONS_TABLE: world.db.tables.decisions,
    NLC_DYNAMODB_ENDPOINT: world.db.endpoint,
    NLC_KUBECONFIG: kubeconfig,
    NLC_EVICTION_DRAINER_FUNCTION: 'nlc-test-evictionDrainer',
    NLC_LAMBDA_ENDPOINT: lambda.endpoint,
    AWS_REGION: 'us-east-1',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) {
    vi.stubEnv(name, undefined);
  }
}

/** A Lambda context (without the deprecated callback helpers, which middy never calls). */
export function lambdaContext(functionName = 'nlc-test-monitorNodeHealth'): Context {
  const context: Omit<Context, 'done' | 'fail' | 'succeed'> = {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2026/03/02/[$LATEST]abcdef',
    getRemainingTimeInMillis: () => 60_000,
  };
  return context as Context;
}
