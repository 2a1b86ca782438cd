// libzstd (Debian: libzstd-dev), for W9's limit: raw ZSTD_compress on the snapshot bytes.
// Also glibc's heap statistics (below).
// The project's own CZstd target is not a product, so the benchmark package has its own
// module (another name, so the two never clash).
#include <zstd.h>

// glibc's heap statistics, for M1's report of the bytes the heap hands out (Swift's
// Glibc module leaves malloc.h out, and mallinfo2 returns a struct by value).
#if defined(__GLIBC__)
#include <malloc.h>
static inline size_t bench_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
#else
static inline size_t bench_heap_in_use(void) { return 0; }
#endif
