#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 is a macro Swift cannot call: a typed helper that opens a stream reading gzip
   (window bits 15 + 16: gzip only, so a zlib or raw deflate stream is refused). */
static inline int czlib_inflate_init_gzip(z_streamp stream) {
    return inflateInit2_(stream, 15 + 16, ZLIB_VERSION, (int)sizeof(z_stream));
}

/* deflateInit2 is a macro too: a stream writing gzip (window bits 15 + 16) at `level`, default memory and strategy
   (the simulator's App Store Connect report downloads). */
static inline int czlib_deflate_init_gzip(z_streamp stream, int level) {
    return deflateInit2_(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, (int)sizeof(z_stream));
}

#endif
