#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

// Typed, non-variadic wrappers over libcurl's variadic setopt/getinfo functions.
// Swift cannot call C variadic functions, so every option kind gets its own shim.
// Everything here is prefixed `ccurl_`.

#include <curl/curl.h>
#include <unistd.h>

// MARK: easy setopt

static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLOPT_WRITEFUNCTION
static inline CURLcode ccurl_easy_setopt_write_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

/// CURLOPT_HEADERFUNCTION (same signature as the write callback)
static inline CURLcode ccurl_easy_setopt_header_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

/// CURLOPT_CLOSESOCKETFUNCTION
static inline CURLcode ccurl_easy_setopt_closesocket_function(CURL *handle, curl_closesocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, callback);
}

// MARK: easy getinfo

static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

// MARK: multi setopt

static inline CURLMcode ccurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

static inline CURLMcode ccurl_multi_setopt_pointer(CURLM *handle, CURLMoption option, void *value) {
    return curl_multi_setopt(handle, option, value);
}

/// CURLMOPT_SOCKETFUNCTION
static inline CURLMcode ccurl_multi_setopt_socket_function(CURLM *handle, curl_socket_callback callback) {
    return curl_multi_setopt(handle, CURLMOPT_SOCKETFUNCTION, callback);
}

/// CURLMOPT_TIMERFUNCTION
static inline CURLMcode ccurl_multi_setopt_timer_function(CURLM *handle, curl_multi_timer_callback callback) {
    return curl_multi_setopt(handle, CURLMOPT_TIMERFUNCTION, callback);
}

// MARK: multi messages

/// The result code of a CURLMSG_DONE message (reads the C union member).
static inline CURLcode ccurl_msg_result(const CURLMsg *message) {
    return message->data.result;
}

// MARK: sockets

/// Closes a socket that curl handed back through CURLOPT_CLOSESOCKETFUNCTION.
static inline int ccurl_close_socket(curl_socket_t socket) {
    return close(socket);
}

#endif
