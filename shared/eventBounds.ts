// Bounds: what one node or pod can put into an event (and, through node-taints, into its Nodes item).
// The event schemas (events.ts) check them; the shared mapping (shared/adapters/kubernetes/bounds.ts)
// applies them.
//
// A node writes its own status, so anything the API server does not validate is bounded here, and the
// shared mapping (shared/adapters/kubernetes/mapping.ts nodeFromV1 / podFromV1) cuts or drops what
// exceeds them, saying so. Where a bound comes from:
// - API-validated, relied on: names (253), label keys (317: a 253-byte prefix, '/', a 63-byte name) and
//   values (63), taint keys and values (the same, validateNodeTaints), toleration keys and values (the
//   same, ValidateTolerations). The mapping drops a taint or a controller label over them (a conforming
//   server never has one), and a pod's tolerations over them end the list (see podFromV1).
// - metav1.Condition's own limits, the API's standard condition type: condition type 316 bytes. A node
//   condition with a longer type is dropped (the controller reads five short ones).
// - Ours: a condition reason 256 bytes (metav1.Condition allows 1,024 for "a single CamelCase word"),
//   a message 2,048 bytes (metav1.Condition allows 32,768), 32 conditions, 64 taints, 32 labels, 128
//   tolerations, a pod's status.reason and controller kind 256 bytes each. Nothing in the API bounds
//   them but the 1.5 MB object limit of etcd.
// Text is measured as what EventBridge counts: the UTF-8 bytes of its JSON encoding (an escaped control
// character is 6 bytes); DynamoDB stores the raw UTF-8, never more.
//
// Worst cases, every field at its bound at once (test/unit/adapters/kubernetes/bounds.test.ts measures
// them, test/faults/hugeNodeConditionMessage.test.ts stores the worst node in dynalite):
// - Node Changed: 32 conditions × (316 + 256 + 2,048 + ~150 of names and times) ≈ 89 KB, 64 taints ×
//   (317 + 63 + ~80) ≈ 29 KB, as many old NoExecute taints ≈ 29 KB, labels and notes ≈ 8 KB: ≈ 155 KB
//   (measured 153,742 bytes), under the 256 KB entry limit EventBridge has in every partition.
// - Pod Changed: 2 × 128 tolerations × (317 + 63 + ~100) ≈ 123 KB plus names (measured 123,699 bytes).
// - A Nodes item: the conditions twice (the node copy, and the monitor's saved status with up to four
//   it adds) ≈ 2 × 88 KB, taints ≈ 29 KB: ≈ 210 KB (measured 211,586 bytes), about half DynamoDB's
//   400 KB item limit.
import { Buffer } from 'node:buffer';

/** Bytes of a condition's type (metav1.Condition's limit); a condition with a longer type is dropped. */
export const MaxConditionTypeBytes = 316;
/** Bytes of a condition's reason; a longer one is cut, ending in the truncation marker. */
export const MaxConditionReasonBytes = 256;
/** Bytes of a condition's message; a longer one is cut, ending in the truncation marker. */
export const MaxConditionMessageBytes = 2_048;
/** Conditions of a node; the controller's own types are kept first. */
export const MaxNodeConditions = 32;
/** Taints of a node; the node controller's own, then NoExecute ones, are kept first. */
export const MaxNodeTaints = 64;
/** Labels of a node (the relay sends only the nine the controller reads). */
export const MaxNodeLabels = 32;
/** Bytes of a taint or toleration key: a qualified name, as the API server validates it. */
export const MaxTaintKeyBytes = 317;
/** Bytes of a taint or toleration value: a label value, as the API server validates it. */
export const MaxTaintValueBytes = 63;
/** Tolerations of a pod; past it, the pod is never evicted for a taint the dropped ones decide. */
export const MaxPodTolerations = 128;
/** Bytes of a pod's status.reason and of its controller's kind; longer ones are cut. */
export const MaxPodTextBytes = 256;
/** Notes on what the mapping cut or dropped from one node, and the bytes of each. */
export const MaxTruncationNotes = 16;
export const MaxTruncationNoteBytes = 512;

/**
 * The bytes `text` takes in a JSON document, without its quotes: UTF-8, with JSON.stringify's
 * escapes (`\"`, `\n`, `\u0001`, a lone surrogate as `\udXXX`). The unit of every text bound.
 *
 * @example wireBytes('a"b') // 4
 */
export function wireBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text), 'utf8') - 2;
}
