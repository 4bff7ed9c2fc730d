// Who talks to the simulated API server, with the RBAC rules the deployment gives them (read from the
// manifests in infra/), so a run also proves the roles allow every call the controller and the relay
// make: a missing verb fails with 403 here as it would on a real cluster. A subject's rules are those of
// the ClusterRoles its ClusterRoleBindings grant (every namespace) and of the Roles its RoleBindings
// grant (their own namespace only).
//
// The controller's identity is also how the simulator tells the controller's writes from the simulated
// kubelets' (docs/simulate.md "Output": "observed from the API simulator").
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import type { Identity, PolicyRule } from '../apiserver/auth.js';

/** The functions' Kubernetes identity when they authenticate with a kubeconfig (infra/cluster-access). */
export const ControllerUser = 'system:serviceaccount:nlc-system:nlc-controller';
/** The relay's service account (infra/relay/rbac.yaml). */
export const RelayUser = 'system:serviceaccount:nlc-system:nlc-relay';
/** Where the relay runs and keeps its leader-election Lease (infra/relay), as the functions expect it. */
export const RelayLeaseNamespace = 'nlc-system';
export const RelayLeaseName = 'nlc-relay';

const ControllerRoleUrl = new URL('../../infra/cluster-access/clusterrole.yaml', import.meta.url);
const ControllerLeaseRoleUrl = new URL('../../infra/cluster-access/relay-lease.yaml', import.meta.url);
const ControllerNodeLeasesRoleUrl = new URL('../../infra/cluster-access/node-leases.yaml', import.meta.url);
const RelayRoleUrl = new URL('../../infra/relay/rbac.yaml', import.meta.url);

const Verb = z.enum(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', '*']);

const Rules = z.array(
  z.object({
    apiGroups: z.array(z.string()).optional(),
    resources: z.array(z.string()),
    verbs: z.array(Verb),
    resourceNames: z.array(z.string()).optional(),
  }),
);

const RoleDoc = z.object({
  kind: z.enum(['ClusterRole', 'Role']),
  metadata: z.object({ name: z.string(), namespace: z.string().optional() }),
  rules: Rules,
});

const BindingDoc = z.object({
  kind: z.enum(['ClusterRoleBinding', 'RoleBinding']),
  metadata: z.object({ name: z.string(), namespace: z.string().optional() }),
  roleRef: z.object({ kind: z.enum(['ClusterRole', 'Role']), name: z.string() }),
  subjects: z.array(z.object({ kind: z.string(), name: z.string(), namespace: z.string().optional() })),
});

function toPolicyRules(rules: z.output<typeof Rules>, namespace?: string): PolicyRule[] {
  return rules.map((rule) => ({
    verbs: rule.verbs,
    resources: rule.resources,
    ...(rule.apiGroups !== undefined && { apiGroups: rule.apiGroups }),
    ...(rule.resourceNames !== undefined && { resourceNames: rule.resourceNames }),
    ...(namespace !== undefined && { namespaces: [namespace] }),
  }));
}

/** The rules of the ClusterRole `name` in a (multi-document) manifest. */
export function clusterRoleRules(text: string, name: string): PolicyRule[] {
  for (const doc of parseAllDocuments(text)) {
    const role = RoleDoc.safeParse(doc.toJS());
    if (!role.success || role.data.kind !== 'ClusterRole' || role.data.metadata.name !== name) continue;
    return toPolicyRules(role.data.rules);
  }
  throw new TypeError(`no ClusterRole ${JSON.stringify(name)} in the manifest`);
}

/**
 * Every rule the manifest's bindings grant the user `system:serviceaccount:<namespace>:<name>`: its
 * ClusterRoles cluster-wide, its Roles in their namespace. Throws when it is granted nothing.
 */
export function subjectRules(text: string, user: string): PolicyRule[] {
  const docs = parseAllDocuments(text).map((d) => d.toJS() as unknown);
  const roles = docs.flatMap((d) => {
    const role = RoleDoc.safeParse(d);
    return role.success ? [role.data] : [];
  });
  const rules: PolicyRule[] = [];
  for (const d of docs) {
    const binding = BindingDoc.safeParse(d);
    if (!binding.success) continue;
    const { metadata, roleRef, subjects, kind } = binding.data;
    const bound = subjects.some(
      (s) => s.kind === 'ServiceAccount' && `system:serviceaccount:${s.namespace ?? ''}:${s.name}` === user,
    );
    if (!bound) continue;
    // A RoleBinding grants in its own namespace, whatever the role's kind; a ClusterRoleBinding everywhere.
    const namespace = kind === 'RoleBinding' ? metadata.namespace : undefined;
    const role = roles.find(
      (r) =>
        r.kind === roleRef.kind &&
        r.metadata.name === roleRef.name &&
        (r.kind === 'ClusterRole' || r.metadata.namespace === metadata.namespace),
    );
    if (role === undefined)
      throw new TypeError(`${kind} ${metadata.name}: no ${roleRef.kind} ${roleRef.name}`);
    rules.push(...toPolicyRules(role.rules, namespace));
  }
  if (rules.length === 0) throw new TypeError(`the manifest grants ${user} nothing`);
  return rules;
}

/** The controller's and the relay's identities, each with what its deployed roles grant it. */
export async function simulatorIdentities(): Promise<{ controller: Identity; relay: Identity }> {
  const [controllerRole, controllerLeaseRole, controllerNodeLeasesRole, relayRole] = await Promise.all([
    readFile(ControllerRoleUrl, 'utf8'),
    readFile(ControllerLeaseRoleUrl, 'utf8'),
    readFile(ControllerNodeLeasesRoleUrl, 'utf8'),
    readFile(RelayRoleUrl, 'utf8'),
  ]);
  return {
    controller: {
      name: ControllerUser,
      token: 'nlc-simulate-controller',
      rules: [
        ...clusterRoleRules(controllerRole, 'nlc-node-lifecycle-controller'),
        ...subjectRules(controllerLeaseRole, ControllerUser),
        ...subjectRules(controllerNodeLeasesRole, ControllerUser),
      ],
    },
    relay: { name: RelayUser, token: 'nlc-simulate-relay', rules: subjectRules(relayRole, RelayUser) },
  };
}
