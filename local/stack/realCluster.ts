// `npm start -- --kubeconfig FILE`: the real cluster is checked before anything starts. A kubeconfig that
// cannot be read is invalid input (exit 2, naming the flag), found in milliseconds rather than after the
// functions' bundling; a cluster that does not answer GET /version is refused (exit 1) rather than a
// stack that says "ready" and then retries forever with warnings only.
import type { KubeConfig } from '@kubernetes/client-node';
import { systemClock } from '../../shared/adapters/clock.js';
import { loadKubeConfig } from '../../shared/adapters/kubernetes/auth.js';
import { createKubernetesCluster } from '../../shared/adapters/kubernetes/cluster.js';
import { ClusterAuthError, ConfigError, NlcError } from '../../shared/errors.js';

/** The cluster of a kubeconfig did not answer. */
export class ClusterUnreachableError extends NlcError {}

/** How long the check waits for /version, per attempt (two attempts). */
const CheckTimeoutMs = 5_000;

/**
 * Reads the kubeconfig (and context) and asks its cluster for /version. Returns the server and its
 * version for the log.
 *
 * @example
 * await checkRealCluster('/home/me/.kube/kind.yaml', undefined); // { server: 'https://127.0.0.1:6443', version: 'v1.34.0' }
 */
export async function checkRealCluster(
  kubeconfig: string,
  context: string | undefined,
): Promise<{ readonly server: string; readonly version: string }> {
  let kc: KubeConfig;
  try {
    ({ kubeConfig: kc } = await loadKubeConfig({
      kind: 'kubeconfigFile',
      path: kubeconfig,
      ...(context !== undefined && { context }),
    }));
  } catch (error) {
    if (!(error instanceof ClusterAuthError)) throw error;
    throw new ConfigError(
      [{ path: context === undefined ? '--kubeconfig' : '--kubeconfig/--context', message: error.message }],
      {
        cause: error,
      },
    );
  }
  const server = kc.getCurrentCluster()?.server ?? '(no server)';
  const cluster = createKubernetesCluster(kc, {
    requestTimeoutMs: CheckTimeoutMs,
    clock: systemClock,
    retry: { maxAttempts: 2, baseDelayMs: 500, maxDelayMs: 500 },
  });
  const got = await cluster.getServerVersion();
  if (!got.ok) {
    throw new ClusterUnreachableError(
      `the cluster of ${kubeconfig} (${server}) did not answer GET /version: ${got.message}. Check the ` +
        "kubeconfig's server, context and credentials, and that this machine can reach it; nothing was started",
    );
  }
  return { server, version: got.value };
}
