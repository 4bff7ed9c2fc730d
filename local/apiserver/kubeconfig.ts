// Kubeconfigs for the simulator: YAML for kubectl and anything that reads KUBECONFIG, and a loaded
// client-node KubeConfig for in-process callers. With https they carry the simulator's certificate
// as certificate-authority-data. Plain http needs `insecure-skip-tls-verify: true`, or client-node
// refuses ("HTTP protocol is not allowed when skipTLSVerify is not set or false").
import { writeFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  /** e.g. http://127.0.0.1:39123 */
  readonly server: string;
  readonly token: string;
  /** Names the cluster, user and context; "nlc-local" by default. */
  readonly name?: string;
  readonly namespace?: string;
  /** PEM of the CA that signed the server's certificate (https); without it TLS is not verified. */
  readonly caPem?: string;
}

function clusterEntry(server: string, caPem: string | undefined): Record<string, unknown> {
  return caPem === undefined
    ? { server, 'insecure-skip-tls-verify': true }
    : { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') };
}

/**
 * A kubeconfig document for the simulator.
 *
 * @example
 * kubeconfigYaml({ server: 'http://127.0.0.1:39123', token: 'abc' });
 */
export function kubeconfigYaml({
  server,
  token,
  name = 'nlc-local',
  namespace,
  caPem,
}: KubeconfigOptions): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: clusterEntry(server, caPem) }],
    users: [{ name, user: { token } }],
    contexts: [
      { name, context: { cluster: name, user: name, ...(namespace !== undefined && { namespace }) } },
    ],
    'current-context': name,
    preferences: {},
  });
}

/** Writes the kubeconfig readable by its owner only (it holds a bearer token). */
export async function writeKubeconfig(path: string, options: KubeconfigOptions): Promise<void> {
  await writeFile(path, kubeconfigYaml(options), { mode: 0o600 });
}

/** A client-node KubeConfig pointing at the simulator, without touching the file system. */
export function makeKubeConfig({
  server,
  token,
  name = 'nlc-local',
  namespace,
  caPem,
}: KubeconfigOptions): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      caPem === undefined
        ? { name, server, skipTLSVerify: true }
        : { name, server, skipTLSVerify: false, caData: Buffer.from(caPem).toString('base64') },
    ],
    users: [{ name, token }],
    contexts: [{ name, cluster: name, user: name, ...(namespace !== undefined && { namespace }) }],
    currentContext: name,
  });
  return kc;
}
