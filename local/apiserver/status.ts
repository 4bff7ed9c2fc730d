// metav1.Status objects and the errors that carry them: the k8s.io/apimachinery/pkg/api/errors
// constructors (NewNotFound, NewConflict, NewInvalid, NewForbidden, ...) with their exact messages,
// reasons, details and codes, so a client sees what a real kube-apiserver answers.
import { NlcError } from '../../shared/errors.js';

export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'Gone'
  | 'Expired'
  | 'Forbidden'
  | 'Unauthorized'
  | 'TooManyRequests'
  | 'InternalError'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'UnsupportedMediaType'
  | 'NotAcceptable'
  | 'Timeout';

export type CauseType =
  | 'FieldValueNotSupported'
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'UnexpectedServerResponse';

export interface StatusCause {
  reason?: CauseType;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** metav1.Status as it goes over the wire. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** A failed API call, carrying the Status a real server would send. */
export class ApiStatusError extends NlcError {
  readonly status: Status;

  constructor(status: Status, options?: ErrorOptions) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`, options);
    this.status = status;
  }

  get code(): number {
    return this.status.code;
  }

  get reason(): StatusReason | undefined {
    return this.status.reason;
  }
}

/** A group + resource, printed as upstream's schema.GroupResource.String(): "nodes", "leases.coordination.k8s.io". */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

/** A group + kind, printed as schema.GroupKind.String(): "Node", "Lease.coordination.k8s.io". */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

export function groupResourceString({ group, resource }: GroupResource): string {
  return group === '' ? resource : `${resource}.${group}`;
}

export function groupKindString({ group, kind }: GroupKind): string {
  return group === '' ? kind : `${kind}.${group}`;
}

function failure(
  code: number,
  reason: StatusReason,
  message: string,
  details?: StatusDetails,
): ApiStatusError {
  // Field order as the server encodes metav1.Status.
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details !== undefined && { details }),
    code,
  };
  return new ApiStatusError(status);
}

function resourceDetails(gr: GroupResource, name: string): StatusDetails {
  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (gr.group !== '') details.group = gr.group;
  details.kind = gr.resource;
  return details;
}

/** A Go-style %q of a string (JSON escaping is close enough for the names we print). */
export function quote(s: string): string {
  return JSON.stringify(s);
}

export function notFound(gr: GroupResource, name: string): ApiStatusError {
  const message =
    name === ''
      ? `${groupResourceString(gr)} not found`
      : `${groupResourceString(gr)} ${quote(name)} not found`;
  return failure(404, 'NotFound', message, resourceDetails(gr, name));
}

export function alreadyExists(gr: GroupResource, name: string): ApiStatusError {
  return failure(
    409,
    'AlreadyExists',
    `${groupResourceString(gr)} ${quote(name)} already exists`,
    resourceDetails(gr, name),
  );
}

/** storage's OptimisticLockErrorMsg. */
export const optimisticLockErrorMsg =
  'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(
  gr: GroupResource,
  name: string,
  cause: string = optimisticLockErrorMsg,
): ApiStatusError {
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${groupResourceString(gr)} ${quote(name)}: ${cause}`,
    resourceDetails(gr, name),
  );
}

/** One field.Error: the cause of an Invalid status. `message` is upstream's ErrorBody(). */
export interface FieldError {
  readonly type: CauseType;
  readonly field: string;
  readonly message: string;
}

/** upstream NewInvalid: `Node "a" is invalid: <err>` or `... is invalid: [<err>, <err>]`. */
export function invalid(gk: GroupKind, name: string, errors: readonly FieldError[]): ApiStatusError {
  const rendered = errors.map((e) => `${e.field}: ${e.message}`);
  // ToAggregate de-duplicates identical messages.
  const unique = [...new Set(rendered)];
  const aggregate = unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (gk.group !== '') details.group = gk.group;
  details.kind = gk.kind;
  details.causes = errors.map((e) => ({ reason: e.type, message: e.message, field: e.field }));
  return failure(422, 'Invalid', `${groupKindString(gk)} ${quote(name)} is invalid: ${aggregate}`, details);
}

/**
 * upstream NewGenericServerResponse(422, ...): what a failed JSON patch operation gets (the famous
 * "the server rejected our request due to an error in our request").
 */
export function unprocessable(serverMessage: string): ApiStatusError {
  return failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {
    causes: [{ reason: 'UnexpectedServerResponse', message: serverMessage }],
  });
}

export function badRequest(message: string): ApiStatusError {
  return failure(400, 'BadRequest', message);
}

export function forbidden(gr: GroupResource, name: string, why: string): ApiStatusError {
  const subject = name === '' ? groupResourceString(gr) : `${groupResourceString(gr)} ${quote(name)}`;
  return failure(403, 'Forbidden', `${subject} is forbidden: ${why}`, resourceDetails(gr, name));
}

/** A Forbidden for a non-resource path (no details), as the authorizer answers. */
export function forbiddenPath(why: string): ApiStatusError {
  return failure(403, 'Forbidden', `forbidden: ${why}`);
}

export function unauthorized(): ApiStatusError {
  return failure(401, 'Unauthorized', 'Unauthorized');
}

/** What API Priority and Fairness answers when it rejects a request. */
export function tooManyRequests(retryAfterSeconds: number): ApiStatusError {
  return failure(429, 'TooManyRequests', 'Too many requests, please try again later.', {
    retryAfterSeconds,
  });
}

export function internalError(message: string): ApiStatusError {
  return failure(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ message }],
  });
}

/** The watch cache's answer to a resourceVersion it no longer has history for. */
export function resourceExpired(message: string): ApiStatusError {
  return failure(410, 'Expired', message);
}

export function methodNotAllowed(): ApiStatusError {
  return failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function unsupportedMediaType(contentType: string, accepted: readonly string[]): ApiStatusError {
  return failure(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    { causes: [{ message: contentType }] },
  );
}

export function pathNotFound(): ApiStatusError {
  return failure(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** A Status with status Success, as a delete of a resource that does not return the object answers. */
export function success(details: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details, code: 200 };
}
