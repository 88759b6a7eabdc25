// The deployment files read as Compose and Kubernetes read them, for the tests that check them (apps/cli/test/deploy.test.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { root } from "./workspace.mjs";

/** A file of the repository, by its path from the root. */
export function readRepoFile(path) {
  return readFileSync(join(root, path), "utf8");
}

/** compose.yaml as Compose reads it (YAML merge keys on), and its codemux services (every one but redis and nginx). */
export function composeFile() {
  const compose = parse(readRepoFile("compose.yaml"), { merge: true });
  const { redis: _redis, nginx: _nginx, ...instances } = compose.services;
  return { compose, instances };
}

/** deploy/k8s/codemux.yaml's documents, and its Deployment's pod spec and codemux container. */
export function k8sManifest() {
  const documents = parseAllDocuments(readRepoFile("deploy/k8s/codemux.yaml")).map((document) => document.toJS());
  const pod = documents.find((document) => document.kind === "Deployment")?.spec?.template?.spec;
  return { documents, pod, container: pod?.containers?.[0] };
}
