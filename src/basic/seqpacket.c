/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "seqpacket.h"

static int send_request(int fd, const char *request, int fd_to_send) {
        char cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = (void *) request, .iov_len = strlen(request)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

        memset(cbuf, 0, sizeof cbuf);
        if (fd_to_send >= 0) {
                struct cmsghdr *c;
                mh.msg_control = cbuf;
                mh.msg_controllen = sizeof cbuf;
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd_to_send, sizeof(int));
        }
        return sendmsg(fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

static int exchange(int fd, const char *sock_path, const char *request, int fd_to_send, int timeout_ms, char *reply,
                    size_t size) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        ssize_t n;
        int r;

        if (strlen(sock_path) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return -errno;
        r = send_request(fd, request, fd_to_send);
        if (r < 0)
                return r;
        if (poll(&pfd, 1, timeout_ms) != 1)
                return -ETIMEDOUT;
        n = recv(fd, reply, size - 1, 0);
        if (n < 0)
                return -errno;
        reply[n] = '\0';
        return 0;
}

int seqpacket_request(const char *sock_path, const char *request, int fd_to_send, int timeout_ms, char *reply,
                      size_t size) {
        int fd, r;

        if (size == 0)
                return -EINVAL;
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        r = exchange(fd, sock_path, request, fd_to_send, timeout_ms, reply, size);
        close(fd);
        return r;
}
