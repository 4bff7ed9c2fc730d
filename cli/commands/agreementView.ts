// The agreement report's shape (`nlc agreement -o json|yaml`, a public interface), apart from the command
// so the HTML page (agreementReport.ts) reads it without importing the command.
import type { AgreementKind, AgreementReport } from '../../shared/agreement.js';
import { minorOfServerVersion } from '../../shared/domain/upstreamVersion.js';

export interface AgreementRowView {
  readonly kind: AgreementKind;
  /** The node, or the pod (`namespace/name`) of a pod action. */
  readonly subject: string;
  /** The taint (`key:effect`), or "". */
  readonly detail: string;
  readonly ours: string | null;
  readonly theirs: string | null;
  readonly lagMs: number | null;
  readonly agreed: boolean;
  readonly why: string | null;
}

/** This controller, as its monitor last recorded itself on the cluster row (null: not recorded yet). */
export interface AgreementControllerView {
  /** The upstream minor it emulates. */
  readonly emulationVersion: string | null;
  /** shadow (dryRun): the cluster's controller's actions are recorded; active: they are not. */
  readonly mode: 'shadow' | 'active' | null;
  readonly nodeMonitorGracePeriodMs: number | null;
}

export interface AgreementView {
  readonly cluster: string;
  readonly since: string;
  readonly toleranceMs: number;
  readonly compared: readonly AgreementKind[];
  readonly decisions: number;
  readonly agreed: number;
  readonly disagreed: number;
  readonly medianLagMs: number;
  readonly maxLagMs: number;
  readonly byKind: AgreementReport['byKind'];
  readonly controller: AgreementControllerView;
  /** The API server's version as the monitor last read it (hourly), or null. */
  readonly clusterVersion: string | null;
  /** Nodes the cluster's controller acted on that this controller has no trace of. */
  readonly nodesNeverSeen: readonly string[];
  readonly worst: readonly AgreementRowView[];
  readonly rows: readonly AgreementRowView[];
}

// Words both the table and the page use.

export const listed = (names: readonly string[]): string =>
  names.length <= 5 ? names.join(', ') : `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;

/** Which minor each side runs, as the cluster row records them. */
export function versionLine(view: AgreementView): string {
  const ours = view.controller.emulationVersion;
  const theirs = view.clusterVersion;
  const emulates =
    ours === null ? 'this controller has not recorded its version yet' : `this controller emulates ${ours}`;
  if (theirs === null)
    return `versions: ${emulates}; the cluster's is not recorded yet (the monitor reads /version hourly)`;
  const oursMinor = ours === null ? undefined : minorOfServerVersion(ours);
  const theirsMinor = minorOfServerVersion(theirs);
  const same =
    oursMinor === undefined || theirsMinor === undefined
      ? ''
      : oursMinor === theirsMinor
        ? ' (the same minor)'
        : ' (a version difference: the rows it explains say which change)';
  return `versions: ${emulates}, the cluster runs ${theirs}${same}`;
}
