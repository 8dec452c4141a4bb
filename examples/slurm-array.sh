#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A study as a Slurm job array (issue 42): each array task runs one trial
# under leash, and every trial's report lands in one directory, which
# `leash report` and `leash suggest` then summarise.
#
#   sbatch --array=0-999%64 examples/slurm-array.sh python3 trial.py
#   leash report "reports-$JOBID" -o study.html   # distributions, who hit what
#   leash suggest "reports-$JOBID"                # limits for the next study
#
# The trial command gets the array index as its last argument. LEASH_OPTS
# (default: --memory 2G --wall-time 10m) are the trial's limits; a profile
# (--profile hpo-trial) works as well. STUDY_REPORTS: the directory (default
# reports-<array job id> beside the submission), on a file system every
# node sees. Where the site runs leash's Slurm hooks, each task is already
# in a job of leash's: this `leash run` nests its job under it.
#SBATCH --job-name=study
#SBATCH --output=study-%A_%a.out
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: sbatch --array=... $0 TRIAL-COMMAND [ARG]..." >&2; exit 2; }
reports=${STUDY_REPORTS:-${SLURM_SUBMIT_DIR:-$PWD}/reports-${SLURM_ARRAY_JOB_ID:-local}}
mkdir -p "$reports"
# shellcheck disable=SC2086 # LEASH_OPTS is a list of options
exec "${LEASH:-leash}" run -q --name "trial-${SLURM_ARRAY_TASK_ID:-0}" ${LEASH_OPTS:---memory 2G --wall-time 10m} \
        --report-dir "$reports" -- "$@" "${SLURM_ARRAY_TASK_ID:-0}"
