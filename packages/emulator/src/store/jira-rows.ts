/**
 * Row types of the Jira platform's tables (create screens, custom fields, workflows, instance settings), kept apart
 * from store.ts so that file stays a readable size; store.ts re-exports them.
 */

/** A Jira component, version or priority: id (a numeric string, as Jira writes it) and name. */
export interface NamedRef {
  id: string;
  name: string;
}

/** The fields an issue type's create screen has besides project, issue type, summary and description. */
export interface CreateScreen {
  fields: string[];
  /** Fields that must be given: on the screen, or `description`. */
  required: string[];
}

/** A Jira custom field, `customfield_NNNNN`; select fields have options with Jira ids. */
export interface CustomField {
  id: string;
  name: string;
  type: 'string' | 'number' | 'option' | 'multi-option' | 'user';
  options: { id: string; value: string }[];
}

/** Jira workflow transition offered for issues. */
export interface Transition {
  id: number;
  name: string;
  /** Target status. */
  to: string;
  /** Statuses it is offered from (empty: any). */
  from: string[];
  resolution: string | null;
  /**
   * Transition screen (absent: none; then only a resolving transition takes `resolution`). See
   * handlers/jira-workflow.ts.
   */
  screen?: { fields: string[]; required: string[]; validators?: string[] };
}

/** A Jira workflow status: its category, and whether issues in it may be edited (`jira.issue.editable`). */
export interface WorkflowStatus {
  name: string;
  category: 'new' | 'indeterminate' | 'done';
  editable: boolean;
}

/**
 * A Jira workflow of a seed, used by the projects and issue types it names (empty: all); issues of other projects
 * and types follow the default workflow (the `transitions` table). The first status is where issues start.
 */
export interface Workflow {
  id: number;
  name: string;
  projects: string[];
  issueTypes: string[];
  statuses: WorkflowStatus[];
  transitions: Transition[];
}

/** An instance-wide setting of the emulated Jira (e.g. `jiraVersion`), by name. */
export interface Setting {
  id: string;
  value: unknown;
}
