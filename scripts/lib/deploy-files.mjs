// The deployment files read as Docker, Compose and Kubernetes read them, for the tests that check them
// (apps/cli/test/deploy.test.ts) and run them (scripts/test/deploy.test.mjs).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { root } from "./workspace.mjs";

/** A file of the repository, by its path from the root. */
export function readRepoFile(path) {
  return readFileSync(join(root, path), "utf8");
}

/** The Dockerfile's last stage (the image): its instructions (continued lines joined), the JSON forms parsed. */
export function imageStage(text = readRepoFile("Dockerfile")) {
  const lines = text.replace(/\\\n\s*/g, " ").split("\n");
  const stage = lines.slice(lines.findLastIndex((line) => line.startsWith("FROM ")));
  const all = (name) => stage.filter((line) => line.startsWith(`${name} `)).map((line) => line.slice(name.length + 1).trim());
  const json = (name) => {
    const value = all(name).at(-1);
    return value === undefined ? undefined : JSON.parse(value);
  };
  const healthcheck = all("HEALTHCHECK").at(-1);
  return {
    copies: all("COPY"),
    runs: all("RUN"),
    user: all("USER").at(-1),
    entrypoint: json("ENTRYPOINT"),
    cmd: json("CMD"),
    // HEALTHCHECK [OPTIONS] CMD ["program", ...]
    healthcheck: healthcheck === undefined ? undefined : JSON.parse(healthcheck.slice(healthcheck.indexOf("CMD [") + 4)),
  };
}

/** Where the image script puts codemux's folders, as paths in the image: `data` (where codemux runs) and `home` (CODEMUX_HOME). */
export function imageFolders(text = readRepoFile("deploy/image/codemux-image.sh")) {
  const folder = (name) => {
    const match = new RegExp(`^${name}="\\$root(/[^"$]+)"$`, "m").exec(text);
    if (!match) throw new Error(`deploy/image/codemux-image.sh sets no ${name}="$root/...".`);
    return match[1];
  };
  return { data: folder("data"), home: folder("home") };
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
