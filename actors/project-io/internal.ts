// Internals of project-io that tests reach directly.
export { readZip, writeZip, isSafeArchivePath, DEFAULT_ZIP_LIMITS, type ZipEntry, type ZipLimits } from './zip.js';
export { programEdges, programTools, danglingReferences, type DependencyEdge, type ToolRef } from './dependency-graph.js';
