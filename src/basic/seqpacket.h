/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One request and one reply over a SOCK_SEQPACKET unix socket, with an
 * optional fd passed along (SCM_RIGHTS). The Slurm supervisor's clients
 * speak it: `leash slurm` (through /proc/self/fd/N/sock of a held state
 * directory) and spank_leash.so, which links nothing else of leash's.
 */
#pragma once

#include <stddef.h>

/* The reply is NUL-terminated; -ETIMEDOUT when none came in timeout_ms.
 * Hidden: the SPANK plugin, built with default visibility, must not export it. */
__attribute__((visibility("hidden"))) int seqpacket_request(const char *sock_path, const char *request, int fd_to_send,
                                                            int timeout_ms, char *reply, size_t size);
