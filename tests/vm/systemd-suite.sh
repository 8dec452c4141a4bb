#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# spike
exec >/dev/ttyS1 2>&1
stty -F /dev/ttyS1 raw -echo 2>/dev/null
echo "leash-vm: ready"
set -x
systemctl is-system-running
systemctl --no-pager list-units --failed
cat /proc/self/cgroup
cat /sys/fs/cgroup/cgroup.subtree_control
u=$(getent passwd 1000 | cut -d: -f1)
time runuser -l "$u" -c 'id; cat /proc/self/cgroup; echo XDG=$XDG_RUNTIME_DIR; ls -l /run/user/1000/; systemctl --user is-system-running; cat /sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/cgroup.subtree_control; cat /sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/cgroup.controllers'
loginctl --no-pager
systemd-cgls --no-pager | head -40
journalctl --no-pager -p warning | tail -40
echo "leash-vm: status pass=1 fail=0 skip=0"
systemctl poweroff -ff
