#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash ps and stat under systemd, as uid 1000 (47-ps.sh: root): lib.sh's ps_proofs.

. "$(dirname "$0")/lib.sh"

ps_proofs
tap_plan "$_tap_n"
tap_done
