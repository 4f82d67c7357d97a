import type { Actor, ActorEnv, ActorKind } from '../../runtime/index.js';
import { AgentStore } from '../agents/agent-store.js';
import { DeploymentStore, deploymentView } from '../deployments/index.js';
import { readArchive } from './archive-reader.js';
import { ProjectExporter, type DeploymentSource, type ExportOptions, type ProjectExport, type ProjectInfo, type ProjectPreview } from './project-exporter.js';
import { ProjectImporter, type ImportOptions, type ImportResult } from './project-importer.js';

/** Messages of the project-io actor (key: projectIoActorKey). */
export type ProjectIoMessage =
  | { type: 'preview'; tenantId: string; project: ProjectInfo }
  | { type: 'export'; tenantId: string; project: ProjectInfo; options: ExportOptions }
  | { type: 'import'; tenantId: string; project: ProjectInfo; contentType: string; body: Uint8Array; options: ImportOptions };

/** Reply of each message type. */
export type ProjectIoReply = ProjectPreview | ProjectExport | ImportResult;

/** The project-io actor's address for a project. */
export function projectIoActorKey(tenantId: string, projectId: string): string {
  return `${tenantId}/${projectId}`;
}

/**
 * One actor per project: hashing, zipping and compiling run on a worker thread instead of the
 * gateway's, and imports into one project apply one at a time.
 */
class ProjectIoActor implements Actor {
  readonly #exporter: ProjectExporter;
  readonly #importer: ProjectImporter;

  constructor(env: ActorEnv) {
    this.#exporter = new ProjectExporter(new AgentStore(env.store), deploymentSource(new DeploymentStore(env.store)));
    this.#importer = new ProjectImporter(env.store);
  }

  async receive(message: unknown): Promise<ProjectIoReply> {
    const msg = message as ProjectIoMessage;
    switch (msg.type) {
      case 'preview':
        return this.#exporter.preview(msg.tenantId, msg.project);
      case 'export':
        return this.#exporter.export(msg.tenantId, msg.project, msg.options);
      case 'import': {
        const body = Buffer.from(msg.body.buffer, msg.body.byteOffset, msg.body.byteLength);
        return this.#importer.import(msg.tenantId, msg.project.id, readArchive(body, msg.contentType), msg.options);
      }
    }
  }
}

/** The `project-io` actor kind. */
export const projectIoActorKind: ActorKind = {
  create: (_key, env) => new ProjectIoActor(env),
};

const DEPLOYMENT_PAGE = 200;

/** Every deployment of a project, oldest first, as its public view (no tenant id). */
function deploymentSource(deployments: DeploymentStore): DeploymentSource {
  return {
    list: (tenantId, projectId) => {
      const out: { id: string; record: unknown }[] = [];
      for (let offset = 0; ; offset += DEPLOYMENT_PAGE) {
        const page = deployments.list(tenantId, projectId, { limit: DEPLOYMENT_PAGE, offset }).deployments;
        for (const d of page) out.push({ id: d.id, record: deploymentView(d) });
        if (page.length < DEPLOYMENT_PAGE) return out.reverse();
      }
    },
  };
}
