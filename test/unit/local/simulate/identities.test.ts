// The simulator's identities carry what the deployed manifests grant: the relay reads node Leases only
// in kube-node-lease (a Role there) and manages only its own leader-election Lease, so a run fails with
// 403 where a real cluster would.
import { describe, expect, it } from 'vitest';
import { authorize, type RequestAttributes } from '../../../../local/apiserver/auth.js';
import { RelayUser, simulatorIdentities, subjectRules } from '../../../../local/simulate/identities.js';

const lease = (verb: RequestAttributes['verb'], namespace: string, name = ''): RequestAttributes => ({
  verb,
  apiGroup: 'coordination.k8s.io',
  resource: 'leases',
  namespace,
  name,
});

describe('the relay’s identity (infra/relay/rbac.yaml)', () => {
  it('lists and watches Leases in kube-node-lease only, and manages only its own Lease', async () => {
    const { relay } = await simulatorIdentities();
    expect(authorize(relay, lease('list', 'kube-node-lease'))).toBeUndefined();
    expect(authorize(relay, lease('watch', 'kube-node-lease'))).toBeUndefined();
    expect(authorize(relay, lease('list', 'kube-system'))).toEqual(expect.any(String));
    expect(authorize(relay, lease('update', 'kube-node-lease', 'node-a'))).toEqual(expect.any(String));
    expect(authorize(relay, lease('get', 'nlc-system', 'nlc-relay'))).toBeUndefined();
    expect(authorize(relay, lease('update', 'nlc-system', 'another-controller'))).toEqual(expect.any(String));
    expect(authorize(relay, { verb: 'list', apiGroup: '', resource: 'nodes', namespace: '', name: '' })).toBe(
      undefined,
    );
  });

  it('a binding to a role the manifest does not define is an error, and so is a subject granted nothing', () => {
    const dangling = `
kind: RoleBinding
metadata: { name: b, namespace: x }
roleRef: { kind: Role, name: missing }
subjects: [{ kind: ServiceAccount, name: nlc-relay, namespace: nlc-system }]
`;
    expect(() => subjectRules(dangling, RelayUser)).toThrow('RoleBinding b: no Role missing');
    expect(() => subjectRules('kind: ConfigMap\nmetadata: { name: c }\n', RelayUser)).toThrow('grants');
  });
});
