import { Type } from '@sinclair/typebox';
import { ParleyError, verifyPassword } from '../../runtime/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { compileValidator } from '../validate.js';

const LoginBody = compileValidator(
  Type.Object({ email: Type.String({ minLength: 3, maxLength: 320 }), password: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false }),
);

// Verified against when the email is unknown, so a miss costs the same time as a wrong password.
const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** POST /api/auth/login: email and password for a JWT (docs/auth.md). */
export const authRoutes: RouteModule = (deps) => [
  {
    method: 'POST',
    path: '/api/auth/login',
    auth: 'none',
    handler: async ({ body }) => {
      const { email, password } = LoginBody(body);
      const user = deps.tenancy.userByEmail(email);
      const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
      if (!user || !ok) throw new ParleyError('UNAUTHORIZED', 'Wrong email or password');
      const { token, expiresAt } = await deps.auth.issueToken(user);
      return json({ success: true, token, tokenType: 'Bearer', expiresAt, user: { id: user.id, email: user.email, role: user.role, tenantId: user.tenantId } });
    },
  },
];
