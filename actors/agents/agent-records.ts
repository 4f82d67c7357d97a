import type { AgentProgram } from '../language/index.js';

/** An agent of a project: its mutable working copy and how many versions were compiled from it. */
export interface AgentRecord {
  id: string;
  tenantId: string;
  projectId: string;
  name: string;
  description: string | null;
  /** The working copy; editing it changes no version. */
  dslContent: string;
  versionCount: number;
  createdAt: string;
  updatedAt: string;
}

/** An immutable compiled version of an agent. */
export interface AgentVersion {
  tenantId: string;
  projectId: string;
  agentName: string;
  version: number;
  dslContent: string;
  program: AgentProgram;
  createdAt: string;
  createdBy: string | null;
}

/** The version record without its program, as the API shows it. */
export type AgentVersionSummary = Omit<AgentVersion, 'program' | 'tenantId'>;
