// Who talks to the simulated API server, with the RBAC rules the deployment gives them (read from the
// manifests in infra/), so a run also proves the ClusterRoles allow every call the controller and the
// relay make: a missing verb fails with 403 here as it would on a real cluster.
//
// The controller's identity is also how the simulator tells the controller's writes from the simulated
// kubelets' (SCENARIOS.md "Output": "observed from the API simulator").
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import type { Identity, PolicyRule } from '../apiserver/auth.js';

/** The functions' Kubernetes identity when they authenticate with a kubeconfig (infra/cluster-access). */
export const ControllerUser = 'system:serviceaccount:nlc-system:nlc-controller';
/** The relay's service account (infra/relay/rbac.yaml). */
export const RelayUser = 'system:serviceaccount:nlc-system:nlc-relay';

const ControllerRoleUrl = new URL('../../infra/cluster-access/clusterrole.yaml', import.meta.url);
const RelayRoleUrl = new URL('../../infra/relay/rbac.yaml', import.meta.url);

const Verb = z.enum(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', '*']);

const ClusterRole = z.object({
  kind: z.literal('ClusterRole'),
  metadata: z.object({ name: z.string() }),
  rules: z.array(
    z.object({
      apiGroups: z.array(z.string()).optional(),
      resources: z.array(z.string()),
      verbs: z.array(Verb),
      resourceNames: z.array(z.string()).optional(),
    }),
  ),
});

/** The rules of the ClusterRole `name` in a (multi-document) manifest. */
export function clusterRoleRules(text: string, name: string): PolicyRule[] {
  for (const doc of parseAllDocuments(text)) {
    const role = ClusterRole.safeParse(doc.toJS());
    if (!role.success || role.data.metadata.name !== name) continue;
    return role.data.rules.map((rule) => ({
      verbs: rule.verbs,
      resources: rule.resources,
      ...(rule.apiGroups !== undefined && { apiGroups: rule.apiGroups }),
      ...(rule.resourceNames !== undefined && { resourceNames: rule.resourceNames }),
    }));
  }
  throw new TypeError(`no ClusterRole ${JSON.stringify(name)} in the manifest`);
}

/** The controller's and the relay's identities, each with its deployed ClusterRole. */
export async function simulatorIdentities(): Promise<{ controller: Identity; relay: Identity }> {
  const [controllerRole, relayRole] = await Promise.all([
    readFile(ControllerRoleUrl, 'utf8'),
    readFile(RelayRoleUrl, 'utf8'),
  ]);
  return {
    controller: {
      name: ControllerUser,
      token: 'nlc-simulate-controller',
      rules: clusterRoleRules(controllerRole, 'nlc-node-lifecycle-controller'),
    },
    relay: { name: RelayUser, token: 'nlc-simulate-relay', rules: clusterRoleRules(relayRole, 'nlc-relay') },
  };
}
