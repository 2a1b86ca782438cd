// CRC-32C with the processor's own instruction, where it has one: SSE 4.2 on
// x86-64, the CRC extension on AArch64. The engine checks every frame it reads and
// writes; the instruction does in one step what a table takes eight lookups for.
#ifndef OSD_CCRC32C_H
#define OSD_CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Nonzero when this processor has a CRC-32C instruction `osd_crc32c_update` may use.
int osd_crc32c_hardware_available(void);

/// `crc` (the running register, not inverted) continued over `count` bytes from
/// `bytes`. Call only when `osd_crc32c_hardware_available()` is nonzero.
uint32_t osd_crc32c_update(uint32_t crc, const void *bytes, size_t count);

#endif
