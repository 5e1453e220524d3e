// LD_PRELOAD shim for scripts/crash-replay: records every pwrite/write and
// ftruncate to the file named by WTRACE_FILE, in order, into the log
// WTRACE_LOG. Record: kind (1 byte: 'W' write, 'T' truncate, 'S' process
// start, 'E' process end), offset or length (u64), data length (u64), time
// before and after the call (u64 ns, CLOCK_MONOTONIC), then the data.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <limits.h>
#include <time.h>

static int target_fd = -1;
static int log_fd = -1;
static char target_real[PATH_MAX];

static void init(void) {
    static int done = 0;
    if (done) return;
    done = 1;
    const char *t = getenv("WTRACE_FILE");
    const char *l = getenv("WTRACE_LOG");
    if (!t || !l) return;
    if (!realpath(t, target_real)) strncpy(target_real, t, PATH_MAX - 1);
    log_fd = (int)syscall(SYS_openat, AT_FDCWD, l, O_WRONLY | O_CREAT | O_APPEND, 0644);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void rec(char kind, uint64_t off, uint64_t len, const void *data, uint64_t t0) {
    char hdr[33];
    uint64_t t1 = now_ns();
    hdr[0] = kind;
    memcpy(hdr + 1, &off, 8);
    memcpy(hdr + 9, &len, 8);
    memcpy(hdr + 17, &t0, 8);
    memcpy(hdr + 25, &t1, 8);
    syscall(SYS_write, log_fd, hdr, 33);
    if (data && len) {
        const char *p = data;
        uint64_t left = len;
        while (left) {
            long n = syscall(SYS_write, log_fd, p, left);
            if (n <= 0) break;
            p += n;
            left -= (uint64_t)n;
        }
    }
}

__attribute__((constructor)) static void wtrace_start(void) {
    init();
    if (log_fd >= 0) rec('S', 0, 0, 0, now_ns());
}

__attribute__((destructor)) static void wtrace_end(void) {
    if (log_fd >= 0) rec('E', 0, 0, 0, now_ns());
}

static void check_open(int fd, const char *path) {
    init();
    if (fd < 0 || log_fd < 0) return;
    char rp[PATH_MAX];
    if (realpath(path, rp) && strcmp(rp, target_real) == 0) target_fd = fd;
}

#define OPENFN(name)                                                     \
    int name(const char *path, int flags, ...) {                         \
        static int (*real)(const char *, int, ...) = 0;                  \
        if (!real) real = dlsym(RTLD_NEXT, #name);                       \
        mode_t mode = 0;                                                 \
        if (flags & (O_CREAT | O_TMPFILE)) {                             \
            va_list ap; va_start(ap, flags); mode = va_arg(ap, int); va_end(ap); \
        }                                                                \
        int fd = real(path, flags, mode);                                \
        check_open(fd, path);                                            \
        return fd;                                                       \
    }
OPENFN(open)
OPENFN(open64)

int close(int fd) {
    static int (*real)(int) = 0;
    if (!real) real = dlsym(RTLD_NEXT, "close");
    if (fd == target_fd) target_fd = -1;
    return real(fd);
}

#define PWRITEFN(name)                                                    \
    ssize_t name(int fd, const void *buf, size_t n, off_t off) {          \
        static ssize_t (*real)(int, const void *, size_t, off_t) = 0;     \
        if (!real) real = dlsym(RTLD_NEXT, #name);                        \
        uint64_t t0 = now_ns();                                           \
        ssize_t r = real(fd, buf, n, off);                                \
        if (fd == target_fd && fd >= 0 && r > 0) rec('W', (uint64_t)off, (uint64_t)r, buf, t0); \
        return r;                                                         \
    }
PWRITEFN(pwrite)
PWRITEFN(pwrite64)

#define TRUNCFN(name)                                                     \
    int name(int fd, off_t len) {                                         \
        static int (*real)(int, off_t) = 0;                               \
        if (!real) real = dlsym(RTLD_NEXT, #name);                        \
        uint64_t t0 = now_ns();                                           \
        int r = real(fd, len);                                            \
        if (fd == target_fd && fd >= 0 && r == 0) rec('T', (uint64_t)len, 0, 0, t0); \
        return r;                                                         \
    }
TRUNCFN(ftruncate)
TRUNCFN(ftruncate64)

ssize_t write(int fd, const void *buf, size_t n) {
    static ssize_t (*real)(int, const void *, size_t) = 0;
    if (!real) real = dlsym(RTLD_NEXT, "write");
    if (fd == target_fd && fd >= 0) {
        off_t off = lseek(fd, 0, SEEK_CUR);
        uint64_t t0 = now_ns();
        ssize_t r = real(fd, buf, n);
        if (r > 0) rec('W', (uint64_t)off, (uint64_t)r, buf, t0);
        return r;
    }
    return real(fd, buf, n);
}
