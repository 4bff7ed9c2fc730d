// The agreement report's shape (`nlc agreement -o json|yaml`, a public interface), apart from the command
// so the HTML page (agreementReport.ts) reads it without importing the command.
import type { AgreementKind, AgreementReport } from '../../shared/agreement.js';

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
  readonly worst: readonly AgreementRowView[];
  readonly rows: readonly AgreementRowView[];
}
