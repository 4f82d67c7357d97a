// Project export and import: the project-io actor and its messages (docs/project-io.md).
export { projectIoActorKind, projectIoActorKey, type ProjectIoMessage, type ProjectIoReply } from './project-io-actor.js';
export type { ProjectPreview, ProjectExport, ExportOptions, ExportWarning, ZipArchive, ProjectInfo } from './project-exporter.js';
export type { ImportResult, ImportOptions, ImportWarning } from './project-importer.js';
export type { Manifest, ManifestFile, Lockfile, LockEntry } from './archive-format.js';
