// Compiled by the Swift toolchain's clang (SwiftPM builds C targets with it): the
// `target(...)` attributes below are clang's spelling (GCC's AArch64 one is "+crc").
#include "CCRC32C.h"

#include <string.h>

#if defined(__x86_64__)

#include <cpuid.h>

int osd_crc32c_hardware_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
uint32_t osd_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    uint64_t c = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        count -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (count > 0) {
        c32 = __builtin_ia32_crc32qi(c32, *p);
        p += 1;
        count -= 1;
    }
    return c32;
}

#elif defined(__aarch64__)

#include <arm_acle.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

int osd_crc32c_hardware_available(void) {
#if defined(__APPLE__)
    return 1;  // every Apple silicon processor has it
#elif defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#else
    return 0;
#endif
}

__attribute__((target("crc")))
uint32_t osd_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __crc32cd(crc, word);
        p += 8;
        count -= 8;
    }
    while (count > 0) {
        crc = __crc32cb(crc, *p);
        p += 1;
        count -= 1;
    }
    return crc;
}

#else

int osd_crc32c_hardware_available(void) { return 0; }

uint32_t osd_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}

#endif
