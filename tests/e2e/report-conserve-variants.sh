#!/bin/bash
# The cost conservation property (report-conserve.sh) on every workload at -O0 and -O2fp:
# the views and --flatten. A test of its own so that it runs beside report-conserve.
source "$(dirname "$0")/report-conserve.sh"
