"""The offline kustomize renderer of the infra tests (tests/infra/kustomize_lite.py) on small inputs."""

from __future__ import annotations

from pathlib import Path

import pytest
from kustomize_lite import KustomizeError, configmap_hash, json6902, render, strategic_merge


def test_the_hash_suffix_is_kustomizes() -> None:
    # `kubectl kustomize` (kustomize v5.5.0) names a generated ConfigMap with literal A=1 "...-89g4tffbfk".
    assert configmap_hash({"A": "1"}) == "89g4tffbfk"


def test_strategic_merge_merges_named_lists_and_deletes_nulls() -> None:
    base = {
        "spec": {
            "replicas": 1,
            "containers": [{"name": "app", "image": "a:1", "env": [{"name": "X", "value": "1"}]}],
        }
    }
    patch = {
        "spec": {
            "replicas": None,
            "containers": [{"name": "app", "image": "a:2"}, {"name": "side", "image": "s:1"}],
        }
    }
    merged = strategic_merge(base, patch)
    assert "replicas" not in merged["spec"]
    assert merged["spec"]["containers"][0] == {
        "name": "app",
        "image": "a:2",
        "env": [{"name": "X", "value": "1"}],
    }
    assert merged["spec"]["containers"][1]["name"] == "side"
    assert base["spec"]["replicas"] == 1, "inputs are not changed"
    with pytest.raises(KustomizeError):
        strategic_merge(base, {"spec": {"$patch": "delete"}})


def test_json6902_add_replace_remove() -> None:
    doc = {"a": [1, 2], "b": {"c/d": 1}}
    out = json6902(doc, [
        {"op": "add", "path": "/a/-", "value": 3},
        {"op": "replace", "path": "/b/c~1d", "value": 2},
        {"op": "remove", "path": "/a/0"},
    ])  # fmt: skip
    assert out == {"a": [2, 3], "b": {"c/d": 2}}
    with pytest.raises(KustomizeError):
        json6902(doc, [{"op": "replace", "path": "/missing", "value": 1}])
    with pytest.raises(KustomizeError):
        json6902(doc, [{"op": "move", "from": "/a", "path": "/z"}])


def test_unsupported_kustomization_fields_are_refused(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: []\ncommonLabels: {a: b}\n")
    with pytest.raises(KustomizeError, match="commonLabels"):
        render(tmp_path)


def test_generated_names_are_rewritten_in_pod_templates(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n      - name: c\n        image: x:1\n"
        "        envFrom: [{configMapRef: {name: knobs}}]\n"
    )
    (tmp_path / "kustomization.yaml").write_text(
        "namespace: ns\nresources: [job.yaml]\nconfigMapGenerator:\n- name: knobs\n  literals: [A=1]\n"
    )
    resources = {r["kind"]: r for r in render(tmp_path)}
    assert resources["ConfigMap"]["metadata"] == {"name": "knobs-89g4tffbfk", "namespace": "ns"}
    env_from = resources["Job"]["spec"]["template"]["spec"]["containers"][0]["envFrom"]
    assert env_from == [{"configMapRef": {"name": "knobs-89g4tffbfk"}}]
