#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 is a macro Swift cannot call: a typed helper that opens a stream reading gzip
   (window bits 15 + 16: gzip only, so a zlib or raw deflate stream is refused). */
static inline int czlib_inflate_init_gzip(z_streamp stream) {
    return inflateInit2_(stream, 15 + 16, ZLIB_VERSION, (int)sizeof(z_stream));
}

#endif
