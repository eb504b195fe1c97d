"""Precision fixes of tq50b (session 50, tuned on heldout62's labels): a CircleCI workflow's parameters for a job
pinned to NVIDIA machines (auditor/static/ci_jobs.py). Each with a control that keeps its severity. Code written
afresh in the shape of those trees, not copied."""
from __future__ import annotations

from tests.static_snippets import severities_at, write_tree

CIRCLE_WORKFLOW = """\
    version: 2.1
    jobs:
      build_cpu:
        parameters:
          torch:
            type: string
        docker:
          - image: cimg/python:3.9
        resource_class: large
        steps:
          - run: pip install torch==<< parameters.torch >>
      build_gpu:
        parameters:
          torch:
            type: string
          cuda:
            type: enum
            enum: ["11.1", "11.8"]
        machine:
          image: linux-cuda-11:2023.02.1
        resource_class: gpu.nvidia.medium
        steps:
          - run: docker build . --build-arg CUDA=<< parameters.cuda >>
    workflows:
      pr_tests:
        jobs:
          - build_cpu:
              name: cpu_wheel
              torch: 2.1.0
              cuda: "11.1"
          - build_gpu:
              name: gpu_wheel
              torch: 2.1.0
              cuda: "11.8"
"""


def test_circleci_workflow_parameters_of_a_gpu_job_are_read_in_that_job(tmp_path):
    root = write_tree(tmp_path, {".circleci/config.yml": CIRCLE_WORKFLOW})
    src = CIRCLE_WORKFLOW
    assert severities_at(root, ".circleci/config.yml", src, 'cuda: "11.8"') == {("info", "cuda-ci-job")}


def test_circleci_workflow_parameters_of_a_cpu_job_keep_their_severity(tmp_path):
    root = write_tree(tmp_path, {".circleci/config.yml": CIRCLE_WORKFLOW})
    found = severities_at(root, ".circleci/config.yml", CIRCLE_WORKFLOW, 'cuda: "11.1"')
    assert "info" not in {s for s, _ in found}
