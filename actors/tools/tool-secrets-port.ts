/**
 * Where tools get their secrets. The executor asks at call time, only for the names a tool's
 * templates use; an implementation is already scoped to one tenant, project and environment
 * (the real one wraps ToolSecretStore.resolve(tenantId, projectId, environment, …)).
 */
export interface ToolSecretResolver {
  /** The plaintext of `secretKey` for `toolName`, or undefined when there is none. */
  resolve(toolName: string, secretKey: string): string | undefined;
}
