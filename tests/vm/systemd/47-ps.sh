#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash ps and stat under systemd, as root (user-47-ps.sh: uid 1000): lib.sh's ps_proofs.

. "$(dirname "$0")/lib.sh"

ps_proofs
tap_plan "$_tap_n"
tap_done
