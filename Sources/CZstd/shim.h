// libzstd (Debian: libzstd-dev), for document sections and journal frames.
#include <zstd.h>
