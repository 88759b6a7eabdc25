export declare function readRepoFile(path: string): string;
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
