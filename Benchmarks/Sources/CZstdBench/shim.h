// libzstd (Debian: libzstd-dev), for W9's limit: raw ZSTD_compress on the snapshot bytes.
// The project's own CZstd target is not a product, so the benchmark package has its own
// module (another name, so the two never clash).
#include <zstd.h>
