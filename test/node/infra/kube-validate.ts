// Kubernetes objects checked against the schemas in kubernetes-models: the kinds
// the agent's and the server's manifests hold, and nothing else.
import { Deployment } from "kubernetes-models/apps/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { Role, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { ConfigMap, Namespace, PersistentVolumeClaim, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import type { KubeObject } from "./infra-rbac.ts";

const modelData = <T>(obj: KubeObject): T => obj as unknown as T;

const VALIDATORS: Record<string, (obj: KubeObject) => void> = {
  "v1/Namespace": (o) => new Namespace(modelData(o)).validate(),
  "v1/ServiceAccount": (o) => new ServiceAccount(modelData(o)).validate(),
  "v1/Secret": (o) => new Secret(modelData(o)).validate(),
  "v1/ConfigMap": (o) => new ConfigMap(modelData(o)).validate(),
  "v1/PersistentVolumeClaim": (o) => new PersistentVolumeClaim(modelData(o)).validate(),
  "v1/Service": (o) => new Service(modelData(o)).validate(),
  "networking.k8s.io/v1/Ingress": (o) => new Ingress(modelData(o)).validate(),
  "apps/v1/Deployment": (o) => new Deployment(modelData(o)).validate(),
  "networking.k8s.io/v1/NetworkPolicy": (o) => new NetworkPolicy(modelData(o)).validate(),
  "rbac.authorization.k8s.io/v1/Role": (o) => new Role(modelData(o)).validate(),
  "rbac.authorization.k8s.io/v1/RoleBinding": (o) => new RoleBinding(modelData(o)).validate(),
};

/** Throws, naming the object, when it is of another kind or fails its schema. */
export function validateKubeObject(obj: KubeObject): void {
  const v = VALIDATORS[`${obj.apiVersion}/${obj.kind}`];
  if (v === undefined) throw new Error(`unexpected kind ${obj.apiVersion} ${obj.kind} (${obj.metadata.name})`);
  v(obj);
}
