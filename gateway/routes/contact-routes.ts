import { Type, type TSchema } from '@sinclair/typebox';
import { ParleyError } from '../../runtime/index.js';
import { CONTACT_FIELD_NAMES, CONTACT_LIMITS, CONTACT_TYPES, ContactStore, IDENTITY_TYPES, type Contact, type ContactFields, type ContactType, type IdentityType } from '../../actors/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { compileValidator, pagination } from '../validate.js';

const text = (maxLength: number, minLength = 0): TSchema => Type.Optional(Type.String({ minLength, maxLength }));
const oneOf = (values: readonly string[]): TSchema => Type.Optional(Type.Union(values.map((v) => Type.Literal(v))));

// Every field is optional; null is taken out before validation (it means "unset"), so the
// schema judges real values only and its messages name the limit that was broken.
const ContactBody = compileValidator(
  Type.Object(
    {
      type: oneOf(CONTACT_TYPES),
      identity: text(CONTACT_LIMITS.identity, 1),
      identityType: oneOf(IDENTITY_TYPES),
      displayName: text(CONTACT_LIMITS.displayName),
      department: text(CONTACT_LIMITS.department),
      employeeId: text(CONTACT_LIMITS.employeeId),
      company: text(CONTACT_LIMITS.company),
      accountRef: text(CONTACT_LIMITS.accountRef),
      channel: text(CONTACT_LIMITS.channel),
      metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: CONTACT_LIMITS.tagLength }), { maxItems: CONTACT_LIMITS.tags })),
    },
    { additionalProperties: false },
  ),
);
const LinkSessionBody = compileValidator(Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }));

/** The body's fields that were given: a value, or null to unset (tags: null means no tags). */
function givenFields(body: Record<string, unknown>): Partial<ContactFields> {
  const values: Record<string, unknown> = {};
  const cleared: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (value === null) cleared[name] = name === 'tags' ? [] : null;
    else values[name] = value;
  }
  ContactBody(values);
  for (const name of Object.keys(cleared)) {
    if (!(CONTACT_FIELD_NAMES as readonly string[]).includes(name)) throw new ParleyError('VALIDATION_ERROR', `Unknown field "${name}"`, { field: name });
  }
  return { ...(values as Partial<ContactFields>), ...(cleared as Partial<ContactFields>) };
}

function enumParam<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[]): T | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ParleyError('VALIDATION_ERROR', `${name} must be one of ${allowed.join(', ')}`, { field: name });
  }
  return raw as T;
}

/** Contacts: CRUD with soft-delete, lookup by identity, and links to sessions (docs/contacts.md). */
export const contactRoutes: RouteModule = (deps) => {
  const contacts = new ContactStore(deps.store);
  const view = (c: Contact): Contact & { linkedSessionCount: number } => ({ ...c, linkedSessionCount: contacts.linkedSessionCount(c.tenantId, c.id) });
  return [
    {
      method: 'POST',
      path: '/api/contacts',
      auth: 'principal',
      permission: 'contact:write',
      handler: async ({ principal, body }) => {
        const given = givenFields(body);
        const fields: ContactFields = {
          type: null, identity: null, identityType: null, displayName: null, department: null, employeeId: null,
          company: null, accountRef: null, channel: null, metadata: null, tags: [], ...given,
        };
        return json({ success: true, data: view(await contacts.create(principal.tenantId, fields)) }, 201);
      },
    },
    {
      method: 'GET',
      path: '/api/contacts',
      auth: 'principal',
      permission: 'contact:read',
      handler: ({ principal, req }) => {
        const { limit, offset } = pagination(req.query);
        const type = enumParam<ContactType>(req.query, 'type', CONTACT_TYPES);
        const channel = req.query.get('channel') || undefined;
        const page = contacts.list(principal.tenantId, { type, channel, limit, offset });
        return json({ success: true, data: page.contacts.map(view), total: page.total, limit, offset });
      },
    },
    {
      method: 'GET',
      path: '/api/contacts/lookup',
      auth: 'principal',
      permission: 'contact:read',
      handler: ({ principal, req }) => {
        const identity = req.query.get('identity');
        if (!identity) throw new ParleyError('VALIDATION_ERROR', 'identity: required', { field: 'identity' });
        const identityType = enumParam<IdentityType>(req.query, 'identityType', IDENTITY_TYPES);
        const contact = contacts.lookup(principal.tenantId, identity, identityType);
        if (!contact) throw new ParleyError('NOT_FOUND', 'Contact not found');
        return json({ success: true, data: view(contact) });
      },
    },
    {
      method: 'GET',
      path: '/api/contacts/{contactId}',
      auth: 'principal',
      permission: 'contact:read',
      handler: ({ principal, params }) => {
        const contact = contacts.get(principal.tenantId, params['contactId']!);
        if (!contact) throw new ParleyError('NOT_FOUND', 'Contact not found');
        return json({ success: true, data: view(contact) });
      },
    },
    {
      method: 'PUT',
      path: '/api/contacts/{contactId}',
      auth: 'principal',
      permission: 'contact:write',
      handler: async ({ principal, params, body }) => {
        // A missing contact is a 404 before the body is judged.
        const contact = contacts.requireLive(principal.tenantId, params['contactId']!);
        return json({ success: true, data: view(await contacts.update(principal.tenantId, contact.id, givenFields(body))) });
      },
    },
    {
      method: 'DELETE',
      path: '/api/contacts/{contactId}',
      auth: 'principal',
      permission: 'contact:write',
      body: 'none',
      handler: async ({ principal, params }) => {
        await contacts.softDelete(principal.tenantId, params['contactId']!);
        return json({ success: true });
      },
    },
    {
      method: 'POST',
      path: '/api/contacts/{contactId}/link-session',
      auth: 'principal',
      permission: 'contact:write',
      handler: async ({ principal, params, body }) => {
        const contact = contacts.requireLive(principal.tenantId, params['contactId']!);
        const { sessionId } = LinkSessionBody(body);
        await contacts.linkSession(principal.tenantId, contact.id, sessionId);
        return json({ success: true });
      },
    },
  ];
};
