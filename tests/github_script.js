// Runs an actions/github-script `script` under node as the action does: an async function of
// (github, context, core, require), with `github` an Octokit-like client whose
// rest.issues.{listComments,createComment,updateComment}, rest.pulls.{list,create,update} and
// paginate() speak to the REST API at
// GITHUB_API_URL (the test's stand-in). A refused request throws an error with .status, as
// Octokit's RequestError does. Usage: node github_script.js SCRIPT_FILE
'use strict';
const fs = require('fs');

const api = process.env.GITHUB_API_URL.replace(/\/$/, '');
const token = process.env.SCRIPT_TOKEN;
const event = JSON.parse(fs.readFileSync(process.env.GITHUB_EVENT_PATH, 'utf8'));
const [owner, repo] = process.env.GITHUB_REPOSITORY.split('/');

async function request(method, path, body) {
  const reply = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await reply.json();
  if (!reply.ok) {
    const error = new Error(data.message || `HTTP ${reply.status}`);
    error.status = reply.status;
    throw error;
  }
  return { status: reply.status, data, headers: { link: reply.headers.get('link') } };
}

const issues = {
  listComments: ({ owner, repo, issue_number, per_page = 30, page = 1 }) =>
    request('GET', `/repos/${owner}/${repo}/issues/${issue_number}/comments?per_page=${per_page}&page=${page}`),
  createComment: ({ owner, repo, issue_number, body }) =>
    request('POST', `/repos/${owner}/${repo}/issues/${issue_number}/comments`, { body }),
  updateComment: ({ owner, repo, comment_id, body }) =>
    request('PATCH', `/repos/${owner}/${repo}/issues/comments/${comment_id}`, { body }),
};

const pulls = {
  list: ({ owner, repo, head, state = 'open', per_page = 30, page = 1 }) =>
    request('GET', `/repos/${owner}/${repo}/pulls?head=${encodeURIComponent(head)}&state=${state}&per_page=${per_page}&page=${page}`),
  create: ({ owner, repo, head, base, title, body }) =>
    request('POST', `/repos/${owner}/${repo}/pulls`, { head, base, title, body }),
  update: ({ owner, repo, pull_number, title, body }) =>
    request('PATCH', `/repos/${owner}/${repo}/pulls/${pull_number}`, { title, body }),
};

const github = {
  rest: { issues, pulls },
  async paginate(method, params) {
    const all = [];
    for (let page = 1; ; page += 1) {
      const reply = await method({ ...params, page });
      all.push(...reply.data);
      if (!reply.headers.link || !reply.headers.link.includes('rel="next"')) return all;
    }
  },
};

const context = {
  eventName: process.env.GITHUB_EVENT_NAME,
  repo: { owner, repo },
  issue: { owner, repo, number: (event.pull_request || event.issue || {}).number },
  runId: Number(process.env.GITHUB_RUN_ID),
  serverUrl: process.env.GITHUB_SERVER_URL,
  payload: event,
};

const core = {
  warning: (message) => console.log(`::warning::${message}`),
  info: (message) => console.log(message),
  setFailed: (message) => { console.log(`::error::${message}`); process.exitCode = 1; },
};

const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
const script = fs.readFileSync(process.argv[2], 'utf8');
new AsyncFunction('github', 'context', 'core', 'require', script)(github, context, core, require)
  .catch((error) => { console.log(`::error::Unhandled error: ${error}`); process.exitCode = 1; });
