import {
  bitbucketAddAnnotations,
  bitbucketDeleteAnnotations,
  bitbucketPutReport,
  bitbucketReports,
  bitbucketSetBuildStatus,
} from '../contract/codehost/bitbucket.js';
import {
  githubComments,
  githubCreateComment,
  githubDeleteComment,
  githubEditComment,
} from '../contract/codehost/github.js';
import { gitlabCreateNote, gitlabDeleteNote, gitlabEditNote, gitlabNotes } from '../contract/codehost/gitlab.js';
import { bindGroup, type ClientOptions, type Methods, ServiceClient } from './base.js';
import { ConfigError } from './errors.js';

const BITBUCKET = {
  reports: bitbucketReports,
  putReport: bitbucketPutReport,
  deleteAnnotations: bitbucketDeleteAnnotations,
  addAnnotations: bitbucketAddAnnotations,
  setBuildStatus: bitbucketSetBuildStatus,
} as const;
const GITLAB = {
  notes: gitlabNotes,
  createNote: gitlabCreateNote,
  editNote: gitlabEditNote,
  deleteNote: gitlabDeleteNote,
} as const;
const GITHUB = {
  comments: githubComments,
  createComment: githubCreateComment,
  editComment: githubEditComment,
  deleteComment: githubDeleteComment,
} as const;

/** A code host's client (Bitbucket DC, GitLab, GitHub) for the pull request's report; `baseUrl` is the API root. */
export class CodeHostClient extends ServiceClient {
  readonly bitbucket: Methods<typeof BITBUCKET>;
  readonly gitlab: Methods<typeof GITLAB>;
  readonly github: Methods<typeof GITHUB>;

  constructor(options: ClientOptions) {
    super(options, 'codehost', '', async () => {
      throw new ConfigError('a code host takes a token (Bearer)');
    });
    this.bitbucket = bindGroup(this, BITBUCKET);
    this.gitlab = bindGroup(this, GITLAB);
    this.github = bindGroup(this, GITHUB);
  }
}
