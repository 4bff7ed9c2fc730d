// The drainer trigger loadRuntime builds: an asynchronous Invoke through @aws-sdk/client-lambda
// (InvocationType Event) to NLC_EVICTION_DRAINER_FUNCTION, at NLC_LAMBDA_ENDPOINT (here a local stand-in,
// as serverless-offline's lambda port is in the local stack). A failed invoke is a DrainerTriggerError
// naming the function.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRuntime, type Runtime } from '../../../shared/adapters/runtime.js';
import { DrainerTriggerError } from '../../../shared/errors.js';
import { silentObserver } from '../../../shared/ports/observer.js';
import { startFakeLambda, type FakeLambda } from './fakeLambda.js';

let lambda: FakeLambda;
let runtime: Runtime;
let dir: string;

beforeAll(async () => {
  lambda = await startFakeLambda();
  dir = await mkdtemp(join(tmpdir(), 'nlc-runtime-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    'apiVersion: v1\nkind: Config\nclusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443" } }]\n' +
      'users: [{ name: u, user: { token: t } }]\ncontexts: [{ name: x, context: { cluster: c, user: u } }]\n' +
      'current-context: x\n',
  );
  runtime = await loadRuntime(
    {
      NLC_CLUSTER: 'prod',
      NLC_NODES_TABLE: 'nlc-prod-nodes',
      NLC_ZONES_TABLE: 'nlc-prod-zones',
      NLC_EVICTION_QUEUE_TABLE: 'nlc-prod-eviction-queue',
      NLC_POD_EVICTIONS_TABLE: 'nlc-prod-pod-evictions',
      NLC_DECISIONS_TABLE: 'nlc-prod-decisions',
      NLC_DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
      NLC_EVICTION_DRAINER_FUNCTION: 'nlc-prod-evictionDrainer',
      NLC_LAMBDA_ENDPOINT: lambda.endpoint,
      NLC_KUBECONFIG: kubeconfig,
    },
    { source: 'monitor', observer: silentObserver },
  );
});

afterAll(async () => {
  runtime.stores.client.destroy();
  await lambda.close();
  await rm(dir, { recursive: true, force: true });
});

describe('triggerDrainer', () => {
  it('invokes the drainer asynchronously with the invocation as payload', async () => {
    await runtime.triggerDrainer?.({ source: 'nlc.monitor', cluster: 'prod', reason: 'monitorPass' });
    expect(lambda.invokes).toEqual([
      {
        functionName: 'nlc-prod-evictionDrainer',
        invocationType: 'Event',
        payload: { source: 'nlc.monitor', cluster: 'prod', reason: 'monitorPass' },
      },
    ]);
  });

  it('a failed invoke is a DrainerTriggerError naming the function and the cause', async () => {
    lambda.answer(404, 'ResourceNotFoundException');
    const failed = runtime.triggerDrainer?.({
      source: 'nlc.monitor',
      cluster: 'prod',
      reason: 'monitorPass',
    });
    await expect(failed).rejects.toBeInstanceOf(DrainerTriggerError);
    await expect(failed).rejects.toThrow(
      /^could not invoke the eviction drainer "nlc-prod-evictionDrainer": ResourceNotFoundException/,
    );
    lambda.answer(202);
  });
});
