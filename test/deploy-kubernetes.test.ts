// The Kubernetes base in deploy/kubernetes/base, checked without a cluster: every manifest the
// kustomization lists validates against the Kubernetes JSON schemas (kubernetes-models), and each
// service has what an operator relies on: probes on /health, resources, a disruption budget, the
// ConfigMap, the existing Secret, a non-root read-only container and the image Kustomize pins.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { Deployment } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Service } from "kubernetes-models/v1";
import { parseAllDocuments, parse as parseYaml } from "yaml";

const base = new URL("../deploy/kubernetes/base/", import.meta.url);
const version = readFileSync(new URL("../VERSION", import.meta.url), "utf8").trim();

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  // biome-ignore lint/suspicious/noExplicitAny: manifests are read as plain data
  spec?: any;
  data?: Record<string, string>;
}

const models: Record<string, new (data: never) => { validate(): void }> = {
  "apps/v1/Deployment": Deployment,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "v1/ConfigMap": ConfigMap,
  "v1/Service": Service,
};

function load(): { kustomization: Record<string, unknown>; manifests: Manifest[] } {
  const kustomization = parseYaml(readFileSync(new URL("kustomization.yaml", base), "utf8"));
  const manifests: Manifest[] = [];
  for (const file of kustomization.resources as string[]) {
    for (const doc of parseAllDocuments(readFileSync(new URL(file, base), "utf8"))) {
      assert.deepEqual(doc.errors, [], file);
      manifests.push(doc.toJS() as Manifest);
    }
  }
  return { kustomization, manifests };
}

test("every manifest of the base is valid against the Kubernetes schemas", () => {
  const { manifests } = load();
  assert.ok(manifests.length > 0);
  for (const manifest of manifests) {
    const model = models[`${manifest.apiVersion}/${manifest.kind}`];
    assert.ok(model, `${manifest.kind} ${manifest.metadata.name}: no schema checked for it`);
    assert.doesNotThrow(
      () => new model(manifest as never).validate(),
      `${manifest.kind} ${manifest.metadata.name}`,
    );
  }
});

test("the schemas catch a broken manifest (the check is not vacuous)", () => {
  const { manifests } = load();
  const deployment = structuredClone(manifests.find((m) => m.kind === "Deployment") as Manifest);
  deployment.spec.template.spec.containers[0].readinessProbe.httpGet.port = { name: "http" };
  assert.throws(() => new Deployment(deployment as never).validate(), /readinessProbe/);
});

test("each service: probes on /health, resources, a PDB, config and the existing Secret", () => {
  const { kustomization, manifests } = load();
  assert.deepEqual(kustomization.images, [{ name: "atrium", newName: "atrium", newTag: version }]);
  const configMaps = new Set(
    manifests.filter((m) => m.kind === "ConfigMap").map((m) => m.metadata.name),
  );
  const deployments = manifests.filter((m) => m.kind === "Deployment");
  assert.deepEqual(deployments.map((d) => d.metadata.name).sort(), [
    "atrium-agent",
    "atrium-broker",
    "atrium-gateway",
    "atrium-memory",
  ]);
  for (const deployment of deployments) {
    const name = deployment.metadata.name;
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    assert.equal(container.image, "atrium", name);
    assert.deepEqual(container.args, ["serve", name.replace("atrium-", "")]);
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
      assert.deepEqual(
        container[probe].httpGet,
        { path: "/health", port: "http" },
        `${name} ${probe}`,
      );
    }
    assert.ok(
      container.ports.some((p: { name: string }) => p.name === "http"),
      name,
    );
    assert.ok(container.resources.requests.cpu && container.resources.requests.memory, name);
    assert.ok(container.resources.limits.memory, name);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true, name);
    assert.equal(pod.securityContext.runAsNonRoot, true, name);
    assert.deepEqual(
      container.volumeMounts.map((v: { mountPath: string }) => v.mountPath).sort(),
      ["/data", "/tmp"],
      name,
    );
    assert.ok(pod.terminationGracePeriodSeconds * 1000 > 20_000, name);

    for (const source of container.envFrom)
      assert.ok(configMaps.has(source.configMapRef.name), name);
    const secretRefs = container.env
      .map(
        (e: { valueFrom?: { secretKeyRef?: { name: string } } }) => e.valueFrom?.secretKeyRef?.name,
      )
      .filter(Boolean);
    assert.ok(secretRefs.length > 0, name);
    // The Secret is the operator's: referred to, never defined here (no key in a repository).
    assert.deepEqual(new Set(secretRefs), new Set(["atrium-secrets"]), name);
    assert.ok(!manifests.some((m) => m.kind === "Secret"));

    const labels = deployment.spec.selector.matchLabels;
    const pdb = manifests.find((m) => m.kind === "PodDisruptionBudget" && m.metadata.name === name);
    assert.ok(pdb, `${name}: no PodDisruptionBudget`);
    assert.deepEqual(pdb.spec.selector.matchLabels, labels, `${name}: PDB`);
    assert.ok(pdb.spec.minAvailable < deployment.spec.replicas, `${name}: PDB blocks every drain`);
    const service = manifests.find((m) => m.kind === "Service" && m.metadata.name === name);
    assert.deepEqual(service?.spec.selector, labels, `${name}: Service`);
  }
});
