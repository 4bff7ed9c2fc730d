// Bearer-token authentication and optional per-identity RBAC-style rules, so a component whose
// ClusterRole lacks a verb fails here as it would on a real cluster. The Forbidden message is the
// RBAC authorizer's (forbiddenMessage in k8s.io/apiserver/pkg/endpoints/handlers/responsewriters).
import type { Verb } from './resources.js';

/** One allowed combination, as in an RBAC PolicyRule. Subresources must be named ("nodes/status"). */
export interface PolicyRule {
  readonly verbs: readonly (Verb | '*')[];
  /** API groups ("" for core); every group when omitted. */
  readonly apiGroups?: readonly string[];
  readonly resources: readonly string[];
  /** Object names the rule is limited to (never matches list, watch or create). */
  readonly resourceNames?: readonly string[];
  /** Namespaces the rule is limited to (as a RoleBinding would); every namespace when omitted. */
  readonly namespaces?: readonly string[];
}

export interface Identity {
  /** The user name requests are attributed to, e.g. "system:serviceaccount:nlc:relay". */
  readonly name: string;
  readonly token: string;
  /** Without rules the identity may do anything (cluster-admin). */
  readonly rules?: readonly PolicyRule[];
}

export interface RequestAttributes {
  readonly verb: Verb;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace: string;
  readonly name: string;
}

function ruleAllows(rule: PolicyRule, attrs: RequestAttributes): boolean {
  if (!rule.verbs.includes('*') && !rule.verbs.includes(attrs.verb)) return false;
  const groups = rule.apiGroups ?? ['*'];
  if (!groups.includes('*') && !groups.includes(attrs.apiGroup)) return false;
  const resource =
    attrs.subresource === undefined ? attrs.resource : `${attrs.resource}/${attrs.subresource}`;
  const resourceMatches = rule.resources.some(
    (r) => r === '*' || r === resource || (attrs.subresource !== undefined && r === `*/${attrs.subresource}`),
  );
  if (!resourceMatches) return false;
  if (
    rule.resourceNames !== undefined &&
    rule.resourceNames.length > 0 &&
    !rule.resourceNames.includes(attrs.name)
  )
    return false;
  if (rule.namespaces !== undefined && !rule.namespaces.includes(attrs.namespace)) return false;
  return true;
}

/** Why the request is forbidden, or undefined when the identity may make it. */
export function authorize(identity: Identity, attrs: RequestAttributes): string | undefined {
  if (identity.rules === undefined) return undefined;
  if (identity.rules.some((rule) => ruleAllows(rule, attrs))) return undefined;
  const resource =
    attrs.subresource === undefined ? attrs.resource : `${attrs.resource}/${attrs.subresource}`;
  const scope =
    attrs.namespace === '' ? 'at the cluster scope' : `in the namespace ${JSON.stringify(attrs.namespace)}`;
  return `User ${JSON.stringify(identity.name)} cannot ${attrs.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attrs.apiGroup)} ${scope}`;
}

/** The identity a bearer token belongs to. */
export function authenticate(
  identities: readonly Identity[],
  authorization: string | undefined,
): Identity | undefined {
  if (authorization === undefined) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  if (match === null) return undefined;
  const token = match[1];
  return identities.find((identity) => identity.token === token);
}
