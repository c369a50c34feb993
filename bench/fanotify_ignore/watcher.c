// watcher: reads a file system's fanotify events as wsindexd's monitor does (the same mask,
// FID mode, 20 ms read pacing), to measure what watching costs a writer, with and without
// per-directory ignore marks. Not wsindexd: a measurement of the kernel's side.
//
//   watcher full|ignore|dironly ROOT
//
// full    every event is read (what the daemon does today).
// dironly as full, but events name the directory only (FAN_REPORT_DIR_FID, no entry name):
//         the kernel copies no name, and a directory's events merge into one in the queue;
//         a client would re-list each changed directory whole.
// ignore  the first event of a child of directory D installs an ignore mark on D for its
//         children's ATTRIB, MODIFY and CLOSE_WRITE (FAN_MARK_IGNORE | FAN_EVENT_ON_CHILD,
//         Linux 6.0); every 200 ms (the daemon's settle time, when a batch would re-list D
//         whole) all marks are removed. A directory's creates, deletes and moves are always
//         reported; its children's attribute and write events only until it is marked.
// Runs until SIGTERM; prints events read and marks made on stderr.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef FAN_MARK_IGNORE
#define FAN_MARK_IGNORE 0x00000400
#endif

static volatile sig_atomic_t stop;
static void on_term(int sig) {
    (void)sig;
    stop = 1;
}

#define MAX_MARKS 65536
static int marked_fd[MAX_MARKS];
static unsigned char marked_key[MAX_MARKS][64];
static int marked_len[MAX_MARKS];
static int nmarked;

static const uint64_t kIgnored = FAN_ATTRIB | FAN_MODIFY | FAN_CLOSE_WRITE | FAN_EVENT_ON_CHILD;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int find_mark(const unsigned char* key, int len) {
    for (int i = 0; i < nmarked; ++i) {
        if (marked_len[i] == len && memcmp(marked_key[i], key, (size_t)len) == 0) return i;
    }
    return -1;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: watcher full|ignore|dironly ROOT\n");
        return 2;
    }
    const int ignore = strcmp(argv[1], "ignore") == 0;
    struct rlimit rl = {MAX_MARKS + 64, MAX_MARKS + 64};
    setrlimit(RLIMIT_NOFILE, &rl);
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    const int dironly = strcmp(argv[1], "dironly") == 0;
    const unsigned report = dironly ? FAN_REPORT_DIR_FID
                                    : FAN_REPORT_DFID_NAME | FAN_REPORT_FID | FAN_REPORT_TARGET_FID;
    int fan = fanotify_init(FAN_CLASS_NOTIF | report | FAN_NONBLOCK | FAN_CLOEXEC,
                            O_RDONLY | O_LARGEFILE | O_CLOEXEC);
    if (fan < 0) {
        perror("fanotify_init");
        return 1;
    }
    const uint64_t mask = FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_ATTRIB |
                          FAN_MODIFY | FAN_CLOSE_WRITE | FAN_DELETE_SELF | FAN_MOVE_SELF |
                          FAN_ONDIR | (dironly ? 0 : FAN_RENAME);
    if (fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, AT_FDCWD, argv[2]) != 0) {
        perror("fanotify_mark");
        return 1;
    }
    int mount_fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    fprintf(stderr, "watcher %s ready\n", argv[1]);
    static char buf[64 * 1024] __attribute__((aligned(8)));
    unsigned long events = 0, marks = 0;
    double next_clear = now() + 0.2;
    while (!stop) {
        struct pollfd p = {fan, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0) goto clear;
        for (;;) {
            ssize_t n = read(fan, buf, sizeof buf);
            if (n <= 0) break;
            size_t off = 0;
            while (off + FAN_EVENT_METADATA_LEN <= (size_t)n) {
                struct fanotify_event_metadata m;
                memcpy(&m, buf + off, sizeof m);
                if (m.event_len < FAN_EVENT_METADATA_LEN) break;
                ++events;
                if (ignore && !(m.mask & FAN_ONDIR)) {
                    // The first info record of a child event names its directory.
                    const char* rec = buf + off + m.metadata_len;
                    const struct fanotify_event_info_header* h = (const void*)rec;
                    if (h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME ||
                        h->info_type == FAN_EVENT_INFO_TYPE_DFID) {
                        const struct fanotify_event_info_fid* fid = (const void*)rec;
                        struct file_handle* fh = (struct file_handle*)fid->handle;
                        int len = (int)(sizeof *fh + fh->handle_bytes);
                        if (len <= 64 && nmarked < MAX_MARKS &&
                            find_mark((const unsigned char*)fh, len) < 0) {
                            char copy[128];
                            memcpy(copy, fh, (size_t)len);
                            int d = open_by_handle_at(mount_fd, (struct file_handle*)copy,
                                                      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                            if (d >= 0 && fanotify_mark(fan,
                                                        FAN_MARK_ADD | FAN_MARK_IGNORE |
                                                            FAN_MARK_IGNORED_SURV_MODIFY,
                                                        kIgnored, d, NULL) == 0) {
                                memcpy(marked_key[nmarked], fh, (size_t)len);
                                marked_len[nmarked] = len;
                                marked_fd[nmarked++] = d;
                                ++marks;
                            } else if (d >= 0) {
                                close(d);
                            }
                        }
                    }
                }
                off += m.event_len;
            }
        }
        usleep(20000);  // read pacing, as the daemon's
    clear:
        if (now() >= next_clear) {
            for (int i = 0; i < nmarked; ++i) {
                fanotify_mark(fan, FAN_MARK_REMOVE | FAN_MARK_IGNORE, kIgnored, marked_fd[i], NULL);
                close(marked_fd[i]);
            }
            nmarked = 0;
            next_clear = now() + 0.2;
        }
    }
    fprintf(stderr, "watcher %s: %lu events, %lu ignore marks\n", argv[1], events, marks);
    return 0;
}
