/**
 * Shapes of `admission.k8s.io/v1` AdmissionReview (k8s.io/api/admission/v1/types.go) and of
 * the `metav1.Status` a denial carries. The TypeScript types are derived from these schemas.
 * Only the fields this webhook reads or writes are listed; unknown fields are ignored.
 */
import { z } from 'zod';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

const GroupVersionKindSchema = z.object({
  group: z.string().default(''), // "" is the core group; some clients omit it
  version: z.string(),
  kind: z.string(),
});

const GroupVersionResourceSchema = z.object({
  group: z.string().default(''),
  version: z.string(),
  resource: z.string(),
});

const OperationSchema = z.enum(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

const AdmissionRequestSchema = z.object({
  uid: z.string({ error: 'is required (a string)' }).min(1, { error: 'must not be empty' }),
  kind: GroupVersionKindSchema,
  resource: GroupVersionResourceSchema,
  subResource: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  operation: OperationSchema,
  /** The object as submitted; `null` on DELETE. Decoded by the rule that guards its kind. */
  object: z.unknown().optional(),
  /** The object as stored; present on UPDATE and DELETE. */
  oldObject: z.unknown().optional(),
  dryRun: z.boolean().optional(),
  /** Who asked (authentication.k8s.io/v1 `UserInfo`); only the name is read, for the log. */
  userInfo: z.object({ username: z.string().optional() }).optional(),
});

export const AdmissionReviewRequestSchema = z.object({
  apiVersion: z.literal(ADMISSION_API_VERSION, { error: `must be "${ADMISSION_API_VERSION}"` }),
  kind: z.literal('AdmissionReview', { error: 'must be "AdmissionReview"' }),
  request: AdmissionRequestSchema,
});

const StatusCauseSchema = z.object({
  reason: z.string(),
  message: z.string(),
  field: z.string(),
});

/** `metav1.Status` as an AdmissionResponse carries it. */
export const StatusSchema = z.object({
  status: z.literal('Failure'),
  code: z.number().int(),
  reason: z.string().optional(),
  message: z.string(),
  details: z
    .object({
      group: z.string(),
      kind: z.string(),
      name: z.string(),
      causes: z.array(StatusCauseSchema),
    })
    .optional(),
});

const AdmissionResponseSchema = z.object({
  uid: z.string(),
  allowed: z.boolean(),
  status: StatusSchema.optional(),
  warnings: z.array(z.string()).optional(),
  /** Recorded in the API server's audit log as `<webhook name>/<key>` (admission/v1 `AuditAnnotations`). */
  auditAnnotations: z.record(z.string(), z.string()).optional(),
});

export const AdmissionReviewResponseSchema = z.object({
  apiVersion: z.literal(ADMISSION_API_VERSION),
  kind: z.literal('AdmissionReview'),
  response: AdmissionResponseSchema,
});

export type AdmissionRequest = z.infer<typeof AdmissionRequestSchema>;
export type AdmissionReviewRequest = z.infer<typeof AdmissionReviewRequestSchema>;
export type Status = z.infer<typeof StatusSchema>;
export type StatusCause = z.infer<typeof StatusCauseSchema>;
type AdmissionResponse = z.infer<typeof AdmissionResponseSchema>;
export type AdmissionReviewResponse = z.infer<typeof AdmissionReviewResponseSchema>;
/** A decision before it is addressed to a request: an AdmissionResponse without its `uid`. */
export type Verdict = Omit<AdmissionResponse, 'uid'>;
