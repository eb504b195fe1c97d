"""t22f (session 22, project test30 / test31): CUDA images and versions named through Dockerfile build arguments,
NVIDIA's yum repository file, compose driver capabilities. Shapes from ClimaX, granite-tsfm and ACE-Step."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def found(text: str, name: str) -> list[tuple[int, str, str]]:
    return sorted((f.line, f.code, f.severity) for f in ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name).findings)


def test_from_naming_a_cuda_image_through_an_arg_inside_the_reference():
    dockerfile = """\
        # tags: https://catalog.ngc.nvidia.com/orgs/nvidia/containers/pytorch/tags
        ARG BASE_IMAGE=openmpi4.1.0-cuda11.3-cudnn8-ubuntu20.04:latest
        ARG REGISTRY=mcr.microsoft.com

        FROM ${REGISTRY}/azureml/${BASE_IMAGE}
        ARG DEBIAN_FRONTEND=noninteractive
        """
    # the FROM and the ARG whose default makes it a CUDA image; the registry ARG chooses nothing CUDA
    assert [(ln, code) for ln, code, _ in found(dockerfile, "docker/Dockerfile")] == [(2, "NPU016"), (5, "NPU016")]


def test_from_through_args_of_a_cpu_image_is_left_alone():
    dockerfile = """\
        ARG UBUNTU=22.04
        ARG PY=3.11
        FROM python:${PY}-slim-${UBUNTU}
        FROM ubuntu:${UBUNTU}
        """
    assert found(dockerfile, "Dockerfile") == []


def test_cuda_version_parts_and_composites_are_build_settings():
    dockerfile = """\
        FROM tsfminference-cpu AS base
        ARG CUDA_MAJOR_VERSION=12
        ARG CUDA_MINOR_VERSION=4
        ARG CUDA_PATCH_VERSION=1
        ARG CUDA_VERSION=${CUDA_MAJOR_VERSION}.${CUDA_MINOR_VERSION}.${CUDA_PATCH_VERSION}
        ARG CUDA_PKG_VERSION=${CUDA_MAJOR_VERSION}-${CUDA_MINOR_VERSION}
        ARG PYTHON_VERSION=3.12
        ARG TORCH_VERSION=${TORCH_MAJOR}.${TORCH_MINOR}
        COPY cuda.repo-x86_64 /etc/yum.repos.d/cuda.repo
        COPY pip.conf /etc/pip.conf
        """
    assert found(dockerfile, "Dockerfile.gpu") == [(n, "NPU018", "info") for n in range(2, 7)] + \
        [(9, "NPU085", "info")]


def test_removing_nvidias_yum_repository_is_an_error():
    dockerfile = """\
        FROM nvidia/cuda:12.4.1-base-rockylinux9
        RUN rm /etc/yum.repos.d/cuda.repo && dnf makecache
        """
    assert (2, "NPU085", "error") in found(dockerfile, "Dockerfile")


def test_compose_nvidia_driver_capabilities():
    compose = """\
        services:
          ace-step:
            build: .
            runtime: nvidia
            deploy:
              resources:
                reservations:
                  devices:
                    - driver: nvidia
                      count: all
                      capabilities: ["compute", "utility", "graphics", "video"]
          web:
            image: nginx:1.25
            environment:
              - MODE=compute
        # capabilities: [compute, utility]
        """
    assert sorted({(ln, code) for ln, code, _ in found(compose, "docker-compose.yaml")}) == \
        [(4, "NPU017"), (9, "NPU017"), (11, "NPU017")]
