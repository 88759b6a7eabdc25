export declare function readRepoFile(path: string): string;
export interface ImageStage {
  copies: string[];
  runs: string[];
  user: string | undefined;
  entrypoint: string[] | undefined;
  cmd: string[] | undefined;
  healthcheck: string[] | undefined;
}
/** The Dockerfile's last stage (the image): its instructions (continued lines joined), the JSON forms parsed. */
export declare function imageStage(text?: string): ImageStage;
/** Where the image script puts codemux's folders, as paths in the image: `data` (where codemux runs) and `home` (CODEMUX_HOME). */
export declare function imageFolders(text?: string): { data: string; home: string };
export interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[] };
  stop_grace_period?: string;
}
/** compose.yaml as Compose reads it (YAML merge keys on), and its codemux services (every one but redis and nginx). */
export declare function composeFile(): { compose: { services: Record<string, ComposeService> }; instances: Record<string, ComposeService> };
export interface K8sContainer {
  image?: string;
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
/** deploy/k8s/codemux.yaml's documents, and its Deployment's pod spec and codemux container. */
export declare function k8sManifest(): {
  documents: Array<{ kind: string } & Record<string, unknown>>;
  pod: { terminationGracePeriodSeconds?: number; containers: K8sContainer[] } | undefined;
  container: K8sContainer | undefined;
};
