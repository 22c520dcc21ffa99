#!/usr/bin/env bash
# Regenerates tests/github-api/: the parts of GitHub's official API descriptions that the
# fake GitHub server in tests/ validates evalock's requests against, and the webhook
# payloads the tests use. Only what evalock calls is vendored, so the files stay small
# and a diff shows exactly which operations changed upstream.
#
# Sources (npm): @octokit/openapi (REST, OpenAPI 3.0), @octokit/graphql-schema (GraphQL
# introspection), @octokit/webhooks-examples (event payloads).
# Usage: scripts/vendor-openapi.sh [OPENAPI_VERSION [GRAPHQL_VERSION [WEBHOOKS_VERSION]]]
set -euo pipefail

openapi_version="${1:-23.0.2}"
graphql_version="${2:-15.26.1}"
webhooks_version="${3:-7.6.1}"

repo_root="$(cd "$(dirname "$0")/.." && pwd)"
out="$repo_root/tests/github-api"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent \
  "@octokit/openapi@$openapi_version" \
  "@octokit/graphql-schema@$graphql_version" \
  "@octokit/webhooks-examples@$webhooks_version"
mkdir -p "$out/webhooks"

OUT="$out" OPENAPI_VERSION="$openapi_version" GRAPHQL_VERSION="$graphql_version" \
WEBHOOKS_VERSION="$webhooks_version" node <<'NODE'
const fs = require("fs");
const path = require("path");
const out = process.env.OUT;
const modules = path.join(process.cwd(), "node_modules", "@octokit");
const write = (name, value) => fs.writeFileSync(path.join(out, name), JSON.stringify(value, null, 2) + "\n");

// REST: the operations evalock calls, with $refs already resolved (the .deref file).
const operationIds = [
  "pulls/get",
  "pulls/list-review-comments",
  "pulls/create-review",
  "pulls/create-review-comment",
  "pulls/delete-review-comment",
  "issues/list-comments",
  "issues/create-comment",
  "issues/update-comment",
];
// Documentation-only keywords are dropped to keep the vendored file reviewable.
const annotations = new Set(["description", "example", "examples", "x-github", "deprecationDate", "summary"]);
const strip = (value) => {
  if (Array.isArray(value)) return value.map(strip);
  if (value && typeof value === "object") {
    const result = {};
    for (const [key, inner] of Object.entries(value)) {
      // `properties` maps names to schemas: never drop a property called `description`.
      if (key === "properties") {
        result[key] = Object.fromEntries(Object.entries(inner).map(([name, schema]) => [name, strip(schema)]));
      } else if (!annotations.has(key)) {
        result[key] = strip(inner);
      }
    }
    return result;
  }
  return value;
};
const api = JSON.parse(fs.readFileSync(path.join(modules, "openapi/generated/api.github.com.deref.json"), "utf8"));
const operations = [];
for (const [route, methods] of Object.entries(api.paths)) {
  for (const [method, operation] of Object.entries(methods)) {
    if (!operationIds.includes(operation.operationId)) continue;
    const body = operation.requestBody;
    operations.push({
      operationId: operation.operationId,
      method: method.toUpperCase(),
      path: route,
      parameters: strip(operation.parameters || []),
      requestBody: body ? { required: !!body.required, schema: strip(body.content["application/json"].schema) } : null,
      responses: Object.keys(operation.responses),
    });
  }
}
operations.sort((a, b) => a.operationId.localeCompare(b.operationId));
const missing = operationIds.filter((id) => !operations.some((operation) => operation.operationId === id));
if (missing.length) throw new Error(`operations not found upstream: ${missing.join(", ")}`);
write("openapi-operations.json", {
  source: `@octokit/openapi@${process.env.OPENAPI_VERSION} generated/api.github.com.deref.json`,
  openapi: api.openapi,
  operations,
});

// GraphQL: the types evalock's two documents walk through (fields, arguments, type refs).
const typeNames = [
  "Query", "Mutation", "Repository", "PullRequest", "PullRequestReviewThreadConnection",
  "PullRequestReviewThread", "PullRequestReviewCommentConnection", "PullRequestReviewComment",
  "PageInfo", "Actor", "ResolveReviewThreadPayload", "ResolveReviewThreadInput",
];
const wanted = {
  Query: ["repository"],
  Mutation: ["resolveReviewThread"],
  Repository: ["pullRequest"],
  PullRequest: ["reviewThreads"],
};
const schema = JSON.parse(fs.readFileSync(path.join(modules, "graphql-schema/schema.json"), "utf8")).__schema;
const typeRef = (type) => (type.kind === "NON_NULL" ? typeRef(type.ofType) + "!" : type.kind === "LIST" ? `[${typeRef(type.ofType)}]` : type.name);
const types = {};
for (const name of typeNames) {
  const type = schema.types.find((candidate) => candidate.name === name);
  if (!type) throw new Error(`GraphQL type ${name} not found upstream`);
  const fields = (type.fields || type.inputFields || []).filter((field) => !wanted[name] || wanted[name].includes(field.name));
  types[name] = {
    kind: type.kind,
    fields: Object.fromEntries(fields.map((field) => [field.name, {
      type: typeRef(field.type),
      args: Object.fromEntries((field.args || []).map((arg) => [arg.name, typeRef(arg.type)])),
    }])),
  };
}
write("graphql-schema.json", { source: `@octokit/graphql-schema@${process.env.GRAPHQL_VERSION} schema.json`, types });

// Webhook payloads: real examples of the events `evalock github` reads.
const examples = JSON.parse(fs.readFileSync(path.join(modules, "webhooks-examples/api.github.com/index.json"), "utf8"));
const pullRequest = examples.find((definition) => definition.name === "pull_request");
for (const action of ["opened", "synchronize"]) {
  const example = pullRequest.examples.find((candidate) => candidate.action === action);
  if (!example) throw new Error(`no pull_request.${action} example upstream`);
  write(`webhooks/pull_request.${action}.json`, example);
}
fs.writeFileSync(path.join(out, "webhooks", "SOURCE"), `@octokit/webhooks-examples@${process.env.WEBHOOKS_VERSION} api.github.com/index.json\n`);
NODE
echo "wrote $out"
