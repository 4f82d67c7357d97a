/** Kinds of contact (spec: employee, customer, anonymous). */
export const CONTACT_TYPES = ['employee', 'customer', 'anonymous'] as const;
/** One contact kind. */
export type ContactType = (typeof CONTACT_TYPES)[number];

/** What an identity value is (spec: email, phone, external). */
export const IDENTITY_TYPES = ['email', 'phone', 'external'] as const;
/** One identity kind. */
export type IdentityType = (typeof IDENTITY_TYPES)[number];

/** Longest value of each text field, in characters (the spec's limits plus ours, docs/contacts.md). */
export const CONTACT_LIMITS = {
  identity: 256,
  displayName: 200,
  department: 200,
  employeeId: 100,
  company: 200,
  accountRef: 200,
  channel: 100,
  tags: 50,
  tagLength: 50,
} as const;

/** The fields a client may set on a contact (create and update); null means "unset". */
export interface ContactFields {
  type: ContactType | null;
  identity: string | null;
  identityType: IdentityType | null;
  displayName: string | null;
  department: string | null;
  employeeId: string | null;
  company: string | null;
  accountRef: string | null;
  channel: string | null;
  metadata: Record<string, unknown> | null;
  tags: string[];
}

/** Names of the client-settable fields, in the order the API shows them. */
export const CONTACT_FIELD_NAMES = [
  'type', 'identity', 'identityType', 'displayName', 'department', 'employeeId',
  'company', 'accountRef', 'channel', 'metadata', 'tags',
] as const satisfies readonly (keyof ContactFields)[];

/** A contact as stored and as the API shows it. */
export interface Contact extends ContactFields {
  id: string;
  tenantId: string;
  firstSeenAt: string;
  /** Moves when the contact is linked to a session. */
  lastSeenAt: string;
  createdAt: string;
  updatedAt: string;
  /** Set by soft-delete; a deleted contact is hidden from lists, lookups and links. */
  deletedAt: string | null;
}
