import { cuid, ParleyError, type Collection, type Store } from '../../runtime/index.js';
import { SessionStore } from '../session/session-store.js';
import { CONTACT_FIELD_NAMES, IDENTITY_TYPES, type Contact, type ContactFields, type ContactType, type IdentityType } from './contact-records.js';

/** A session's link to a contact. */
interface SessionLink {
  contactId: string;
  linkedAt: string;
}

/** Filters and page of a contact list. */
export interface ContactListQuery {
  type?: ContactType;
  channel?: string;
  limit: number;
  offset: number;
}

const notFound = (): ParleyError => new ParleyError('NOT_FOUND', 'Contact not found');

/** Emails compare case-insensitively; phone numbers and external ids exactly as given. */
function identityKey(tenantId: string, identityType: IdentityType, identity: string): [string, string, string] {
  return [tenantId, identityType, identityType === 'email' ? identity.toLowerCase() : identity];
}

/** An identity without its type (or the reverse) could never be looked up or kept unique. */
function checkIdentityPair(fields: Pick<ContactFields, 'identity' | 'identityType'>): void {
  if (fields.identity !== null && fields.identityType === null) {
    throw new ParleyError('VALIDATION_ERROR', 'identityType: required when identity is set (email, phone or external)', { field: 'identityType' });
  }
  if (fields.identity === null && fields.identityType !== null) {
    throw new ParleyError('VALIDATION_ERROR', 'identity: required when identityType is set', { field: 'identity' });
  }
}

/**
 * Contacts of a tenant. Live contacts are keyed [tenantId, contactId] (CUIDs, so a reverse scan
 * is newest first); soft-deleted ones move to their own collection, so lists and counts never
 * skip over them. An index [tenantId, identityType, identity] keeps identities unique and makes
 * lookup one read; session links are kept both ways ([tenantId, sessionId] and
 * [tenantId, contactId, sessionId]).
 */
export class ContactStore {
  readonly #store: Store;
  readonly #live: Collection<Contact>;
  readonly #deleted: Collection<Contact>;
  readonly #identities: Collection<string>;
  readonly #sessionLinks: Collection<SessionLink>;
  readonly #contactSessions: Collection<string>;
  readonly #sessions: SessionStore;

  constructor(store: Store) {
    this.#store = store;
    this.#live = store.collection('contacts');
    this.#deleted = store.collection('contactsDeleted');
    this.#identities = store.collection('contactIdentities');
    this.#sessionLinks = store.collection('contactSessionLinks');
    this.#contactSessions = store.collection('contactSessionsByContact');
    this.#sessions = new SessionStore(store);
  }

  /** Creates a contact; CONFLICT when its identity is taken for that identity type. */
  async create(tenantId: string, fields: ContactFields): Promise<Contact> {
    checkIdentityPair(fields);
    const now = new Date().toISOString();
    const contact: Contact = { id: cuid(), tenantId, ...fields, firstSeenAt: now, lastSeenAt: now, createdAt: now, updatedAt: now, deletedAt: null };
    await this.#store.transaction(() => {
      this.#claimIdentitySync(contact);
      this.#live.putSync([tenantId, contact.id], contact);
    });
    return contact;
  }

  /** A contact by id, soft-deleted ones included (their deletedAt is set); undefined when missing or foreign. */
  get(tenantId: string, contactId: string): Contact | undefined {
    return this.#live.get([tenantId, contactId]) ?? this.#deleted.get([tenantId, contactId]);
  }

  /** A live contact or NOT_FOUND (soft-deleted, missing and foreign alike). */
  requireLive(tenantId: string, contactId: string): Contact {
    const contact = this.#live.get([tenantId, contactId]);
    if (!contact) throw notFound();
    return contact;
  }

  /** A page of live contacts, newest first, optionally filtered by type and channel. */
  list(tenantId: string, query: ContactListQuery): { contacts: Contact[]; total: number } {
    if (query.type === undefined && query.channel === undefined) {
      const contacts = this.#live.range({ prefix: [tenantId], reverse: true, offset: query.offset, limit: query.limit }).map((e) => e.value);
      return { contacts, total: this.#live.count([tenantId]) };
    }
    const matching = this.#live
      .range({ prefix: [tenantId], reverse: true })
      .map((e) => e.value)
      .filter((c) => (query.type === undefined || c.type === query.type) && (query.channel === undefined || c.channel === query.channel));
    return { contacts: matching.slice(query.offset, query.offset + query.limit), total: matching.length };
  }

  /** The live contact with this identity; without identityType, email then phone then external. */
  lookup(tenantId: string, identity: string, identityType?: IdentityType): Contact | undefined {
    for (const type of identityType ? [identityType] : IDENTITY_TYPES) {
      const id = this.#identities.get(identityKey(tenantId, type, identity));
      const contact = id === undefined ? undefined : this.#live.get([tenantId, id]);
      if (contact) return contact;
    }
    return undefined;
  }

  /** Changes only the given fields (null clears one); a new identity must still be unique. */
  async update(tenantId: string, contactId: string, changes: Partial<ContactFields>): Promise<Contact> {
    return this.#store.transaction(() => {
      const current = this.requireLive(tenantId, contactId);
      const next: Contact = { ...current, updatedAt: new Date().toISOString() };
      for (const name of CONTACT_FIELD_NAMES) {
        if (changes[name] !== undefined) (next as unknown as Record<string, unknown>)[name] = changes[name];
      }
      checkIdentityPair(next);
      if (next.identity !== current.identity || next.identityType !== current.identityType) {
        this.#releaseIdentitySync(current);
        this.#claimIdentitySync(next);
      }
      this.#live.putSync([tenantId, contactId], next);
      return next;
    });
  }

  /** Soft-deletes: sets deletedAt, keeps the record, frees its identity for a new contact. */
  async softDelete(tenantId: string, contactId: string): Promise<Contact> {
    return this.#store.transaction(() => {
      const current = this.requireLive(tenantId, contactId);
      const now = new Date().toISOString();
      const deleted: Contact = { ...current, deletedAt: now, updatedAt: now };
      this.#releaseIdentitySync(current);
      this.#live.removeSync([tenantId, contactId]);
      this.#deleted.putSync([tenantId, contactId], deleted);
      return deleted;
    });
  }

  /**
   * Links a session of the tenant to a live contact (a session has at most one contact: linking
   * again replaces the previous link) and moves the contact's lastSeenAt. NOT_FOUND for a missing
   * or foreign session or contact.
   */
  async linkSession(tenantId: string, contactId: string, sessionId: string): Promise<void> {
    if (this.#sessions.owner(sessionId)?.tenantId !== tenantId) throw new ParleyError('NOT_FOUND', 'Session not found');
    await this.#store.transaction(() => {
      const contact = this.requireLive(tenantId, contactId);
      const now = new Date().toISOString();
      const previous = this.#sessionLinks.get([tenantId, sessionId]);
      if (previous) this.#contactSessions.removeSync([tenantId, previous.contactId, sessionId]);
      this.#sessionLinks.putSync([tenantId, sessionId], { contactId, linkedAt: now });
      this.#contactSessions.putSync([tenantId, contactId, sessionId], now);
      this.#live.putSync([tenantId, contactId], { ...contact, lastSeenAt: now, updatedAt: now });
    });
  }

  /** The live contact linked to a session, for templates (`contact.*`); undefined when none. */
  contactForSession(tenantId: string, sessionId: string): Contact | undefined {
    const link = this.#sessionLinks.get([tenantId, sessionId]);
    return link ? this.#live.get([tenantId, link.contactId]) : undefined;
  }

  /** Number of sessions currently linked to a contact. */
  linkedSessionCount(tenantId: string, contactId: string): number {
    return this.#contactSessions.count([tenantId, contactId]);
  }

  #claimIdentitySync(contact: Contact): void {
    if (contact.identity === null || contact.identityType === null) return;
    const key = identityKey(contact.tenantId, contact.identityType, contact.identity);
    const owner = this.#identities.get(key);
    if (owner !== undefined && owner !== contact.id) {
      throw new ParleyError('CONFLICT', `A contact with this ${contact.identityType} identity already exists`, { field: 'identity' });
    }
    this.#identities.putSync(key, contact.id);
  }

  #releaseIdentitySync(contact: Contact): void {
    if (contact.identity === null || contact.identityType === null) return;
    const key = identityKey(contact.tenantId, contact.identityType, contact.identity);
    if (this.#identities.get(key) === contact.id) this.#identities.removeSync(key);
  }
}
