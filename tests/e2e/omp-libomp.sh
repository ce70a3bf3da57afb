#!/bin/bash
# OpenMP with LLVM's libomp (clang -fopenmp), through the OMPT tool interface: the same
# checks as omp-regions.sh (regions from two callers with a planted imbalance, nested
# regions, tasks, schedule(dynamic)) on the clang build of tests/workloads/omp-regions.c.
exec bash "$(dirname "$0")/omp-regions.sh" clang
