// Deployments: pinned agent versions per environment, and how sessions run on them.
export { ENVIRONMENTS, deploymentView, deploymentListItem, retiredSummary } from './deployment-records.js';
export type { Deployment, DeploymentInput, Environment, ManifestVersion, ModelOverride, RetiredSummary } from './deployment-records.js';
export { DeploymentStore, type Activation } from './deployment-store.js';
export { AUTO_VERSION, checkManifest, resolveManifest } from './manifest.js';
export { admitNewSession, admitContinuedSession } from './session-admission.js';
export { chatDeployment, deploymentEntryAgent } from './chat-target.js';
export { withModelOverride } from './model-override.js';
