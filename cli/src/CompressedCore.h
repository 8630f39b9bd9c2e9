// Cores as they are kept: systemd-coredump writes them compressed (zstd, or LZ4 frames), people
// keep them as .xz. The compression is told by the file's magic bytes, never by its name.
#pragma once

#include <string>

namespace dscope::cli {

// A file descriptor (close-on-exec) of the core's bytes: the file itself, or, when it is
// compressed, an unlinked temporary file (O_TMPFILE in $TMPDIR or /var/tmp, else a memfd) holding
// it decompressed. Throws std::runtime_error with a one-line reason (cannot open, not a regular
// file (a FIFO, a pipe: never waited on), corrupt or cut compressed data, a size past what the file
// can hold or the machine can spare, a decoder that needs too much memory, no room to decompress).
int openCoreBytes(const std::string& path);

}  // namespace dscope::cli
